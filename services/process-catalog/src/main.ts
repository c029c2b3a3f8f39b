import 'reflect-metadata';
import { runServiceProcess } from '@weft/runtime';
import { startProcessCatalogService } from './start-process-catalog-service.js';

/** The process catalog as its own process (distributed mode): WEFT_DATABASE_URL and WEFT_NATS_URL. */
runServiceProcess('process-catalog', ({ config, store, bus }) => startProcessCatalogService({ config, store, bus }));
