import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Schema collections (spec "Schema collections"). */
@Controller()
export class SchemaCollectionController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.createSchemaCollection.subject)
  createSchemaCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.createSchemaCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.listSchemaCollections.subject)
  listSchemaCollections(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.listSchemaCollections(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.getSchemaCollection.subject)
  getSchemaCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.getSchemaCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.updateSchemaCollection.subject)
  updateSchemaCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.updateSchemaCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteSchemaCollection.subject)
  deleteSchemaCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteSchemaCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.addSchemaToCollection.subject)
  addSchemaToCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.addSchemaToCollection(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.removeSchemaFromCollection.subject)
  removeSchemaFromCollection(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.removeSchemaFromCollection(call, callerFrom(ctx));
  }
}
