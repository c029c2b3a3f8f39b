import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { triggerHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import type { MessageContext } from '@weft/bus';
import type { TriggerRuntime } from '../../trigger-runtime.js';
import { TRIGGER_RUNTIME } from './trigger-tokens.js';

/** The trigger service's public HTTP routes (contracts/src/http/trigger-routes.ts), reached through the gateway. */
@Controller()
export class TriggerHttpController {
  constructor(@Inject(TRIGGER_RUNTIME) private readonly runtime: TriggerRuntime) {}

  @MessagePattern(triggerHttp.webhook.subject)
  webhook(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.requests.webhook(call, context);
  }

  @MessagePattern(triggerHttp.listeners.subject)
  listeners(@Payload() call: HttpCall, @Ctx() context: MessageContext): Promise<HttpReply> {
    return this.runtime.requests.listeners(call, context);
  }
}
