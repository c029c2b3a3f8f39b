import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  engineHttp,
  notFound,
  workQueue,
  type DecryptedConnection,
  type ExecutionRequest,
  type HttpReply,
  type ProcessRecord,
} from '@weft/contracts';
import { InMemoryBus, NatsBus, type Actor, type Bus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { openDatabase, PostgresEventStore, type Database } from '@weft/event-store';
import { createLogger } from '@weft/observability';
import { sql } from 'kysely';
import type { ProcessDirectory } from '../application/engine-ports.js';
import { startEngineService, type RunningEngine } from '../start-engine-service.js';

/**
 * One engine for the benchmark: embedded (PGlite in memory + in-memory bus) or distributed
 * (PostgreSQL in a fresh schema + NATS, both on loopback). Processes come from an in-bench
 * directory standing in for the catalog, so only the engine is measured.
 */
export type BenchMode = 'embedded' | 'distributed';

export interface BenchStack {
  mode: BenchMode;
  bus: Bus;
  store: PostgresEventStore;
  engine: RunningEngine;
  processes: Map<string, ProcessRecord>;
  actor(organizationId: string): Actor;
  /** Puts a request on this engine's work queue, as the trigger service does. */
  enqueue(request: ExecutionRequest): Promise<void>;
  /** POST /processes/test as the gateway sends it. */
  testProcess(processId: string, body: unknown, actor: Actor, query?: Record<string, string>): Promise<HttpReply>;
  close(): Promise<void>;
}

class BenchDirectory implements ProcessDirectory {
  constructor(readonly processes: Map<string, ProcessRecord>) {}
  async getProcess(processId: string, organizationId?: string): Promise<ProcessRecord> {
    const process = this.processes.get(processId);
    if (!process || (organizationId && process.organization_id !== organizationId))
      throw notFound(`process ${processId} not found`);
    return process;
  }
  async getConnection(connectionId: string): Promise<DecryptedConnection> {
    throw notFound(`connection ${connectionId} not found`);
  }
}

export async function openBenchStack(mode: BenchMode): Promise<BenchStack> {
  const id = randomUUID().replace(/-/g, '').slice(0, 12);
  const schema = `bench_engine_${id}`;
  const url =
    process.env.WEFT_BENCH_DATABASE_URL ??
    process.env.WEFT_TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/weft_test';
  const natsUrl = process.env.WEFT_BENCH_NATS_URL ?? process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
  // Embedded runs on a PGlite data directory, as `make start` does (its in-memory file system is slower).
  const dataDir = mode === 'embedded' ? mkdtempSync(join(tmpdir(), 'weft-engine-bench-')) : undefined;
  const database: Database = dataDir
    ? await openDatabase({ dataDir })
    : await openDatabase({ url, schema, poolSize: 20 });
  const store = await PostgresEventStore.open(database);
  const bus: Bus =
    mode === 'embedded' ? new InMemoryBus() : await NatsBus.connect({ servers: natsUrl, name: 'engine-bench' });
  const processes = new Map<string, ProcessRecord>();
  const queue = {
    spec: workQueue<ExecutionRequest>(`BENCH_ENGINE_${id}`, `bench.engine.${id}.executions`, ['engine'], 'engine'),
    durable: `bench_engine_${id}`,
  };
  const engine = await startEngineService({
    store,
    bus,
    config: loadConfig({}),
    options: {
      concurrency: 256,
      queue,
      directory: new BenchDirectory(processes),
      logger: createLogger('engine-bench', { level: 'error' }),
    },
  });
  return {
    mode,
    bus,
    store,
    engine,
    processes,
    actor: (organizationId) => ({ organizationId, userId: randomUUID(), userName: 'bench', system: false }),
    enqueue: (request) => bus.enqueue(queue.spec, request, { msgId: request.executionId }),
    testProcess: (processId, body, actor, query = {}) =>
      bus.request(
        engineHttp.testProcess,
        { params: { processId }, query, body, headers: {} },
        { actor, timeoutMs: 120_000 },
      ),
    async close() {
      await engine.stop();
      if (bus instanceof NatsBus)
        await (await jetstreamManager(bus.connection)).streams.delete(queue.spec.stream).catch(() => undefined);
      await bus.close();
      await store.close();
      if (mode === 'distributed') await sql.raw(`DROP SCHEMA "${schema}" CASCADE`).execute(database.db);
      await database.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
