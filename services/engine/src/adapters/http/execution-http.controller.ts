import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { engineHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import type { MessageContext } from '@weft/bus';
import type { EngineRuntime } from '../../engine-runtime.js';
import { ENGINE_RUNTIME } from '../nats/engine-tokens.js';

/** The engine's public HTTP routes (contracts/src/http/engine-routes.ts), reached through the gateway. */
@Controller()
export class ExecutionHttpController {
  constructor(@Inject(ENGINE_RUNTIME) private readonly runtime: EngineRuntime) {}

  @MessagePattern(engineHttp.testProcess.subject)
  testProcess(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.api.testProcess(call, context);
  }

  @MessagePattern(engineHttp.listExecutions.subject)
  listExecutions(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.api.listExecutions(call, context);
  }

  @MessagePattern(engineHttp.getExecution.subject)
  getExecution(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.api.getExecution(call, context);
  }

  @MessagePattern(engineHttp.cancelExecution.subject)
  cancelExecution(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.api.cancelExecution(call, context);
  }

  @MessagePattern(engineHttp.executionStats.subject)
  executionStats(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.api.executionStats(call, context);
  }
}
