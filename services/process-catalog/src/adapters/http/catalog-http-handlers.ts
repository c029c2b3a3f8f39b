import type { CatalogApplication } from '../../application/catalog-application.js';
import type { CatalogHttpHandlers } from './catalog-http-handler.js';
import { collectionHttpHandlers } from './collection-http-handlers.js';
import { connectionHttpHandlers } from './connection-http-handlers.js';
import { processHttpHandlers } from './process-http-handlers.js';
import { schemaHttpHandlers } from './schema-http-handlers.js';

/** Every public endpoint of the catalog, keyed like `catalogHttp`, so none can be left unserved. */
export const catalogHttpHandlers = (app: CatalogApplication): CatalogHttpHandlers => ({
  ...processHttpHandlers(app),
  ...connectionHttpHandlers(app),
  ...schemaHttpHandlers(app),
  ...collectionHttpHandlers(app),
});
