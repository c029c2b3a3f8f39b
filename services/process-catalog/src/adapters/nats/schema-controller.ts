import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Schemas and data blocks. */
@Controller()
export class SchemaController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.createSchema.subject)
  create(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.createSchema(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.listSchemas.subject)
  list(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.listSchemas(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.getSchema.subject)
  get(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.getSchema(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.updateSchema.subject)
  update(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.updateSchema(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteSchema.subject)
  delete(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteSchema(call, callerFrom(ctx));
  }
}
