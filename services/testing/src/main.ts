import 'reflect-metadata';
import { createLogger } from '@weft/observability';
import { runServiceProcess } from '@weft/runtime';
import { startTestingService } from './start-testing-service.js';

/** The testing service as its own process (distributed mode); its runs go through the engine's work queue. */
runServiceProcess('testing', ({ config, store, bus }) =>
  startTestingService({ store, bus, config, options: { logger: createLogger('testing') } }),
);
