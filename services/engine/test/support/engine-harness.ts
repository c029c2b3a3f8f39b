import { jetstreamManager } from '@nats-io/jetstream';
import { workQueue, type ExecutionRequest, type HttpCall, type HttpReply, type RequestSpec } from '@weft/contracts';
import { InMemoryBus, NatsBus, type Actor, type Bus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { sql } from 'kysely';
import { openDatabase, PostgresEventStore, type Database } from '@weft/event-store';
import { createLogger } from '@weft/observability';
import type { EngineOptions } from '../../src/engine-runtime.js';
import { startEngineService, type RunningEngine } from '../../src/start-engine-service.js';
import { namespacedBus } from '@weft/test-support';
import { namespaceOfQueue } from './queue-namespace.js';
import { startTestCatalog, type TestCatalog } from './test-catalog.js';
import { testDatabaseUrl, testNatsUrl } from './test-services.js';

/**
 * An engine for integration tests. Real: event store (PGlite in memory when embedded, PostgreSQL
 * in a fresh schema when distributed), bus (in-memory or NATS), node palette, NestJS transport,
 * and the process catalog service on the same bus and store, which the engine's own catalog
 * client asks. The work queue has a unique stream and subject per harness; on NATS the
 * request/reply subjects carry a prefix per queue, so parallel test files never answer each other.
 */
export type EngineMode = 'embedded' | 'distributed';

export interface EngineHarness {
  mode: EngineMode;
  bus: Bus;
  database: Database;
  store: PostgresEventStore;
  catalog: TestCatalog;
  engine: RunningEngine;
  queue: { spec: ReturnType<typeof workQueue<ExecutionRequest>>; durable: string };
  call(spec: RequestSpec<HttpCall, HttpReply>, call: Partial<HttpCall>, actor: Actor): Promise<HttpReply>;
  close(): Promise<void>;
}

const unique = (): string => crypto.randomUUID().replace(/-/g, '').slice(0, 16);

export interface HarnessShared {
  schema?: string;
  queue?: EngineHarness['queue'];
  /** Wraps the bus the engine (only) sends on: fault injection between the engine and the catalog. */
  engineBus?: (bus: Bus) => Bus;
  /** The database is marked as written by this harness's store alone, as embedded Weft's is. */
  onlyWriter?: boolean;
}

export async function startEngineHarness(
  mode: EngineMode,
  options: EngineOptions = {},
  shared: HarnessShared = {},
): Promise<EngineHarness> {
  const id = unique();
  const schema = shared.schema ?? `test_engine_${id}`;
  const opened =
    mode === 'embedded'
      ? await openDatabase({ dataDir: 'memory://' })
      : await openDatabase({ url: testDatabaseUrl(), schema });
  const database: Database = shared.onlyWriter ? { ...opened, onlyWriter: true } : opened;
  const store = await PostgresEventStore.open(database);
  const queue = shared.queue ?? {
    spec: workQueue<ExecutionRequest>(`TEST_ENGINE_${id}`, `test.engine.${id}.executions`, ['engine'], 'engine'),
    durable: `engine_${id}`,
  };
  const bus: Bus =
    mode === 'embedded'
      ? new InMemoryBus()
      : namespacedBus(await NatsBus.connect({ servers: testNatsUrl() }), namespaceOfQueue(queue.durable));
  const catalog = await startTestCatalog(bus, store);
  const engine = await startEngineService({
    store,
    bus: shared.engineBus ? shared.engineBus(bus) : bus,
    config: loadConfig({}),
    options: {
      leaseMs: 2000,
      retryDelayMs: () => 50,
      errorWebhook: { backoffMs: 20, timeoutMs: 2000 },
      logger: createLogger('engine-test', { level: 'warn' }),
      ...options,
      queue,
    },
  });
  return {
    mode,
    bus,
    database,
    store,
    catalog,
    engine,
    queue,
    call: (spec, call, actor) =>
      bus.request(spec, { params: {}, query: {}, body: undefined, headers: {}, ...call }, { actor, timeoutMs: 60_000 }),
    async close() {
      await engine.stop();
      await catalog.stop();
      // Only the unique stream this harness created is removed; shared streams are never touched.
      if (bus instanceof NatsBus && !shared.queue) {
        await (await jetstreamManager(bus.connection)).streams.delete(queue.spec.stream).catch(() => undefined);
      }
      await bus.close();
      await store.close();
      // The fresh schema this harness made is dropped; a shared one belongs to whoever made it.
      if (mode === 'distributed' && !shared.schema)
        await sql.raw(`DROP SCHEMA "${schema}" CASCADE`).execute(database.db);
      await database.close();
    },
  };
}

export const actorOf = (organizationId: string, extra: Partial<Actor> = {}): Actor => ({
  organizationId,
  userId: crypto.randomUUID(),
  userName: 'Test User',
  system: false,
  ...extra,
});
