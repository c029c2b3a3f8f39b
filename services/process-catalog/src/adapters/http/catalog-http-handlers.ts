import type { CatalogApplication } from '../../application/catalog-application.js';
import type { CatalogHttpHandler, CatalogHttpHandlers } from './catalog-http-handler.js';
import { collectionHttpHandlers } from './collection-http-handlers.js';
import { connectionHttpHandlers } from './connection-http-handlers.js';
import { processHttpHandlers } from './process-http-handlers.js';
import { schemaHttpHandlers } from './schema-http-handlers.js';
import { assertStorableInput } from './storable-input.js';

/** Input the database cannot hold (NUL characters) or that is absurdly deep is a 400, never a 500. */
const guarded =
  (handler: CatalogHttpHandler): CatalogHttpHandler =>
  async (call, caller) => {
    assertStorableInput(call);
    return handler(call, caller);
  };

/** Every public endpoint of the catalog, keyed like `catalogHttp`, so none can be left unserved. */
export const catalogHttpHandlers = (app: CatalogApplication): CatalogHttpHandlers => {
  const handlers: CatalogHttpHandlers = {
    ...processHttpHandlers(app),
    ...connectionHttpHandlers(app),
    ...schemaHttpHandlers(app),
    ...collectionHttpHandlers(app),
  };
  return Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [name, guarded(handler)]),
  ) as CatalogHttpHandlers;
};
