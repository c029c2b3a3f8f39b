import 'reflect-metadata';
import { createLogger } from '@weft/observability';
import { runServiceProcess } from '@weft/runtime';
import { startTriggerService } from './start-trigger-service.js';

/** The trigger service as its own process (distributed mode); replicas run every listener and claim each firing once. */
runServiceProcess('trigger', ({ config, store, bus }) =>
  startTriggerService({ store, bus, config, options: { logger: createLogger('trigger') } }),
);
