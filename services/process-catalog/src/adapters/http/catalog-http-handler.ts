import type { CatalogHttpRouteName, HttpCall, HttpReply } from '@weft/contracts';
import type { Caller } from '../../application/caller.js';

/** One public endpoint of the catalog: an HttpCall from the gateway and its caller, to a reply. */
export type CatalogHttpHandler = (call: HttpCall, caller: Caller) => Promise<HttpReply>;

export type CatalogHttpHandlers = Record<CatalogHttpRouteName, CatalogHttpHandler>;
