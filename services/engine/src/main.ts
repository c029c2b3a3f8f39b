import 'reflect-metadata';
import { createLogger } from '@weft/observability';
import { runServiceProcess } from '@weft/runtime';
import { startEngineService } from './start-engine-service.js';

/** The engine as its own process (distributed mode); replicas share the execution work queue. */
runServiceProcess('engine', ({ config, store, bus }) =>
  startEngineService({
    store,
    bus,
    config,
    options: {
      leaseMs: process.env.WEFT_ENGINE_LEASE_MS ? Number(process.env.WEFT_ENGINE_LEASE_MS) : undefined,
      logger: createLogger('engine'),
    },
  }),
);
