import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Process collections (spec "Process collections"). */
@Controller()
export class ProcessCollectionController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.createProcessCollection.subject)
  createProcessCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.createProcessCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.listProcessCollections.subject)
  listProcessCollections(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.listProcessCollections(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.getProcessCollection.subject)
  getProcessCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.getProcessCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.updateProcessCollection.subject)
  updateProcessCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.updateProcessCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteProcessCollection.subject)
  deleteProcessCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteProcessCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.addProcessToCollection.subject)
  addProcessToCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.addProcessToCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.removeProcessFromCollection.subject)
  removeProcessFromCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.removeProcessFromCollection(call, callerFrom(ctx));
  }
}
