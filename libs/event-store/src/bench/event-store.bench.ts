/**
 * Event store throughput on PGlite (in memory) and PostgreSQL (WEFT_BENCH_DATABASE_URL, or the
 * local test database, in a fresh schema dropped afterwards). Prints numbers; asserts nothing.
 * Run: pnpm bench event-store
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sql } from 'kysely';
import { JetStreamPublisher } from '../adapters/jetstream-publisher.js';
import { OutboxRelay } from '../outbox/outbox-relay.js';
import { openDatabase, type Database } from '../adapters/postgres/open-database.js';
import { PostgresEventStore } from '../adapters/postgres/postgres-event-store.js';
import type { NewEvent } from '../event-store.js';

const SINGLE_APPENDS = 1_000;
const BATCHES = 100;
const BATCH_SIZE = 50;
const STREAM_LENGTH = 1_000;
const STREAM_READS = 10;
const REPLAY_PAGE = 1_000;

const nodeCompleted = (i: number): NewEvent => ({
  type: 'NodeCompleted',
  data: { nodeId: `node-${i % 12}`, output: { status: 200, body: { ok: true, items: [1, 2, 3] } }, durationMs: 3 },
  metadata: { organizationId: 'org-bench', processId: 'process-bench', actorId: 'u-1', correlationId: randomUUID() },
});

const rate = (count: number, ms: number): string => `${Math.round((count / ms) * 1000).toLocaleString('en-US')}/s`;

async function timed(label: string, count: number, unit: string, run: () => Promise<void>): Promise<void> {
  const start = performance.now();
  await run();
  const ms = performance.now() - start;
  console.log(`  ${label.padEnd(34)} ${rate(count, ms).padStart(10)} ${unit}  (${count} in ${ms.toFixed(0)} ms)`);
}

async function benchStore(label: string, database: Database): Promise<void> {
  const store = await PostgresEventStore.open(database);
  console.log(`${label}`);
  await timed('append, 1 event per transaction', SINGLE_APPENDS, 'events', async () => {
    for (let i = 0; i < SINGLE_APPENDS; i += 1) await store.append(`execution-${randomUUID()}`, [nodeCompleted(i)]);
  });
  await timed(`appendMany, batches of ${BATCH_SIZE} streams`, BATCHES * BATCH_SIZE, 'events', async () => {
    for (let b = 0; b < BATCHES; b += 1) {
      await store.appendMany(
        Array.from({ length: BATCH_SIZE }, (_, i) => ({
          streamId: `execution-${randomUUID()}`,
          events: [nodeCompleted(i)],
        })),
      );
    }
  });
  const longStream = `execution-${randomUUID()}`;
  for (let i = 0; i < STREAM_LENGTH; i += 100) {
    await store.append(
      longStream,
      Array.from({ length: 100 }, (_, j) => nodeCompleted(i + j)),
    );
  }
  await timed(`readStream of ${STREAM_LENGTH} events`, STREAM_LENGTH * STREAM_READS, 'events', async () => {
    for (let r = 0; r < STREAM_READS; r += 1) await store.readStream(longStream);
  });
  const head = await store.headPosition();
  await timed(`catch-up replay (readAll, pages of ${REPLAY_PAGE})`, head, 'events', async () => {
    for (let position = 0; position < head;) {
      const page = await store.readAll({ fromPosition: position, limit: REPLAY_PAGE });
      if (page.length === 0) break;
      position = page[page.length - 1]!.position;
    }
  });
  await benchRelay(store);
  await store.close();
}

/** Outbox relay to a JetStream stream of its own (deleted afterwards), when NATS is reachable. */
async function benchRelay(store: PostgresEventStore): Promise<void> {
  const url = process.env.WEFT_BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
  const nc = await connect({ servers: url, timeout: 2_000 }).catch(() => undefined);
  if (!nc) {
    console.log(`  outbox relay skipped: no NATS at ${url}`);
    return;
  }
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  const stream = `WEFT_BENCH_${id}`;
  const prefix = `weft-bench-${id}`;
  try {
    const publisher = await JetStreamPublisher.create(nc, { stream, subjects: [`${prefix}.>`] });
    const head = await store.headPosition();
    const relay = new OutboxRelay(store, publisher, {
      name: `bench-relay-${id}`,
      subjectFor: (event) => `${prefix}.${event.type}`,
    });
    await timed('outbox relay to JetStream', head, 'events', async () => {
      relay.start();
      await relay.waitForPosition(head);
    });
    await relay.stop();
  } finally {
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false);
    await nc.close();
  }
}

async function main(): Promise<void> {
  const pglite = await openDatabase({ dataDir: 'memory://' });
  try {
    await benchStore('PGlite (in memory)', pglite);
  } finally {
    await pglite.close();
  }

  const url = process.env.WEFT_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/weft_test';
  const schema = `bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  let postgres: Database | undefined;
  try {
    postgres = await openDatabase({ url, schema });
    await benchStore(`PostgreSQL (${new URL(url).host}, schema ${schema})`, postgres);
  } catch (error) {
    console.log(`PostgreSQL skipped: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    if (postgres) {
      await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(postgres.db);
      await postgres.close();
    }
  }
}

await main();
