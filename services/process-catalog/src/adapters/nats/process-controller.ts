import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Process records, lock, start/stop, lint, history, export/import and fork: the gateway's calls, answered over the bus. */
@Controller()
export class ProcessController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.createProcess.subject)
  create(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.createProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.listProcesses.subject)
  list(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.listProcesses(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.getProcess.subject)
  get(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.getProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.updateProcess.subject)
  update(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.updateProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteProcess.subject)
  delete(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.lockProcess.subject)
  lock(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.lockProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.unlockProcess.subject)
  unlock(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.unlockProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.startProcess.subject)
  start(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.startProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.stopProcess.subject)
  stop(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.stopProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.lintProcess.subject)
  lint(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.lintProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.processHistory.subject)
  history(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.processHistory(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.exportProcess.subject)
  export(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.exportProcess(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.importProcesses.subject)
  import(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.importProcesses(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.forkProcess.subject)
  fork(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.forkProcess(call, callerFrom(ctx));
  }
}
