import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Node, edge and whole-graph edits. */
@Controller()
export class GraphController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.addNode.subject)
  addNode(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.addNode(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.updateNode.subject)
  updateNode(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.updateNode(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteNode.subject)
  deleteNode(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteNode(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.addEdge.subject)
  addEdge(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.addEdge(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteEdge.subject)
  deleteEdge(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteEdge(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.replaceGraph.subject)
  replaceGraph(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.replaceGraph(call, callerFrom(ctx));
  }
}
