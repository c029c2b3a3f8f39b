import { workQueue, type ExecutionRequest } from '@weft/contracts';
import { NatsBus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { openDatabase, PostgresEventStore } from '@weft/event-store';
import { createLogger } from '@weft/observability';
import { startEngineService } from '../../src/start-engine-service.js';
import { namespacedBus } from '@weft/test-support';
import { namespaceOfQueue } from './queue-namespace.js';

/**
 * An engine in its own process, for the SIGKILL tests; configured by the parent through env. It
 * asks the real catalog the parent runs (startDistributedTestCatalog) under its queue's namespace.
 */
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const database = await openDatabase({ url: env('WEFT_TEST_DATABASE_URL'), schema: env('CHILD_SCHEMA') });
const store = await PostgresEventStore.open(database);
const bus = namespacedBus(
  await NatsBus.connect({ servers: env('WEFT_TEST_NATS_URL'), name: 'engine-child' }),
  namespaceOfQueue(env('CHILD_QUEUE_DURABLE')),
);
// Its subjects served too: a test may call it as the gateway would.
await startEngineService({
  store,
  bus,
  config: loadConfig({}),
  options: {
    leaseMs: Number(env('CHILD_LEASE_MS')),
    queue: {
      spec: workQueue<ExecutionRequest>(env('CHILD_QUEUE_STREAM'), env('CHILD_QUEUE_SUBJECT'), ['engine'], 'engine'),
      durable: env('CHILD_QUEUE_DURABLE'),
    },
    // Optional: an error-webhook attempt that outlasts its claim (the SIGKILL delivery test).
    ...(process.env.CHILD_ERROR_WEBHOOK_CLAIM_MS
      ? { errorWebhook: { timeoutMs: 60_000, claimMs: Number(process.env.CHILD_ERROR_WEBHOOK_CLAIM_MS) } }
      : {}),
    // Optional: how long synchronous runs are held (the SIGKILL-during-hold test).
    ...(process.env.CHILD_SYNC_RUN_HOLD_MS ? { syncRunHoldMs: Number(process.env.CHILD_SYNC_RUN_HOLD_MS) } : {}),
    logger: createLogger('engine-child', { level: 'warn' }),
  },
});
process.stdout.write('ready\n');
