import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import type { MessageContext } from '@weft/bus';
import { catalogHttp, type HttpCall, type HttpReply } from '@weft/contracts';
import { callerFrom } from '../http/call-context.js';
import type { CatalogHttpHandlers } from '../http/catalog-http-handler.js';
import { CATALOG_HTTP_HANDLERS } from './catalog-tokens.js';

/** Process versions (spec "Process versions"). */
@Controller()
export class VersionController {
  constructor(@Inject(CATALOG_HTTP_HANDLERS) private readonly handlers: CatalogHttpHandlers) {}

  @MessagePattern(catalogHttp.createVersion.subject)
  create(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.createVersion(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.listVersions.subject)
  list(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.listVersions(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.getVersion.subject)
  get(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.getVersion(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.restoreVersion.subject)
  restore(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.restoreVersion(call, callerFrom(ctx));
  }

  @MessagePattern(catalogHttp.deleteVersion.subject)
  delete(@Payload() call: HttpCall, @Ctx() ctx: MessageContext): Promise<HttpReply> {
    return this.handlers.deleteVersion(call, callerFrom(ctx));
  }
}
