import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { engineInternal, type ExecutionRecord, type ExecutionRequest } from '@weft/contracts';
import type { EngineRuntime } from '../../engine-runtime.js';
import { ENGINE_RUNTIME } from './engine-tokens.js';

/** Subjects other services call (trigger, testing); never reachable over HTTP. */
@Controller()
export class EngineInternalController {
  constructor(@Inject(ENGINE_RUNTIME) private readonly runtime: EngineRuntime) {}

  @MessagePattern(engineInternal.runExecution.subject)
  runExecution(@Payload() request: ExecutionRequest & { waitSeconds?: number }): Promise<ExecutionRecord> {
    return this.runtime.api.runExecution(request);
  }

  @MessagePattern(engineInternal.getExecution.subject)
  getExecution(@Payload() request: { executionId: string; organizationId?: string }): Promise<ExecutionRecord> {
    return this.runtime.api.getExecutionInternal(request);
  }
}
