import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Connections (credentials for triggers and nodes). */
@Controller()
export class ConnectionController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.createConnection.subject)
  create(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.createConnection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.listConnections.subject)
  list(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.listConnections(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.getConnection.subject)
  get(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.getConnection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteConnection.subject)
  delete(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteConnection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.startOAuthConsent.subject)
  startOAuth(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.startOAuthConsent(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.finishOAuthConsent.subject)
  finishOAuth(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.finishOAuthConsent(call, callerFrom(ctx));
  }
}
