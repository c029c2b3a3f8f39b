import pg from 'pg';
import {
  openDatabase,
  OutboxRelay,
  PostgresEventStore,
  type EventMessage,
  type EventPublisher,
  type PublishOutcome,
} from '../src/index.js';
import { openTestStore, testDatabaseUrl, type TestStore } from './support/test-database.js';

class RecordingPublisher implements EventPublisher {
  readonly enforcesPreviousMsgId = false;
  readonly positions: number[] = [];
  async publish(_subject: string, message: EventMessage): Promise<PublishOutcome> {
    this.positions.push(message.position);
    return {};
  }
  async lastPublishedPosition(): Promise<number> {
    return this.positions.at(-1) ?? 0;
  }
}

const expectExactlyOnceInOrder = (publisher: RecordingPublisher): void => {
  expect(publisher.positions).toEqual([...publisher.positions].sort((a, b) => a - b));
  expect(new Set(publisher.positions).size).toBe(publisher.positions.length);
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers of pipelined appends arrive `ms` after the commit (network latency). */
const delayAnswers = (t: TestStore, ms: number): void => {
  const queued = t.database.queuedTransaction!;
  Object.defineProperty(t.database, 'queuedTransaction', {
    value: async (statements: Parameters<typeof queued>[0]) => {
      const result = await queued(statements);
      await sleep(ms);
      return result;
    },
  });
};

/** `n` appenders, each one event per append to its own stream, exact expectations (pipelined path). */
const load = (store: PostgresEventStore, n: number, tag: string) => {
  let running = true;
  const firsts: number[] = [];
  const all: number[] = [];
  const done = Promise.all(
    Array.from({ length: n }, async (_, k) => {
      let version = 0;
      while (running) {
        const [result] = await store.appendMany([
          {
            streamId: `${tag}-${k}`,
            expectedVersion: version === 0 ? 'no_stream' : version,
            events: [{ type: 'Load', data: { k } }],
          },
        ]);
        version += 1;
        await new Promise((resolve) => setImmediate(resolve));
        const position = result!.events[0]!.position;
        if (firsts.length === 0) firsts.push(position);
        all.push(position);
      }
    }),
  );
  return {
    firsts,
    all,
    stop: async () => {
      running = false;
      await done;
    },
  };
};

/**
 * The relay takes its own process's commits from memory, and a gap before them waits only for the
 * appends that could fill it. With appends always in flight (load; answers arrive 40 ms after
 * their commit, as over a network, so two commits are always in flight), a gap no append of this
 * process can fill (a rolled-back append's hole, another process's event whose NOTIFY was lost)
 * is still read and published during the load, exactly once and in order. How long such a gap
 * may wait is pinned by committed-events.unit.spec.ts (a timed assertion here would be noise).
 */
describe('outbox relay with appends always in flight (PostgreSQL)', () => {
  let t: TestStore;
  let relay: OutboxRelay;
  let publisher: RecordingPublisher;
  beforeEach(async () => {
    t = await openTestStore('postgres');
    publisher = new RecordingPublisher();
    relay = new OutboxRelay(t.store, publisher, { pollMs: 200 });
    relay.start();
    const [first] = await t.store.appendMany([
      { streamId: 'base', expectedVersion: 'no_stream', events: [{ type: 'Base', data: {} }] },
    ]);
    await relay.waitForPosition(first!.events[0]!.position);
  });
  afterEach(async () => {
    await relay.stop();
    await t.dispose();
  });

  test("a rolled-back append's hole is read during the load", async () => {
    t.store.registerProjections([
      {
        name: 'boom',
        eventTypes: ['Boom'],
        apply: async () => {
          throw new Error('boom');
        },
        reset: async () => undefined,
      },
    ]);
    await expect(
      t.store.append('boom', [{ type: 'Boom', data: {} }], { expectedVersion: 'no_stream' }),
    ).rejects.toThrow('boom');
    await sleep(500); // the relay's poll reads (nothing new): the failure's read request is used up
    delayAnswers(t, 40);
    const running = load(t.store, 3, 'hole');
    await sleep(1500);
    const firstLoad = running.firsts[0]!;
    const positionDuringLoad = relay.position;
    await running.stop();
    await relay.waitForPosition(Math.max(...running.all));
    expectExactlyOnceInOrder(publisher);
    expect(positionDuringLoad).toBeGreaterThanOrEqual(firstLoad);
  }, 30_000);

  test("another process's append whose NOTIFY was lost (the LISTEN connection dropped) is read during the load", async () => {
    // Drop this process's LISTEN connection (a network blip, idle timeout, pg_terminate_backend): it is not renewed.
    const admin = new pg.Client({ connectionString: testDatabaseUrl() });
    await admin.connect();
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE 'LISTEN "${t.store.notifyChannel}"%'`,
    );
    await admin.end();
    expect(rows.length).toBe(1);
    await sleep(300);
    delayAnswers(t, 40);
    const running = load(t.store, 2, 'notify');
    await sleep(300);
    // Another process appends one event.
    const otherDatabase = await openDatabase({ url: testDatabaseUrl(), schema: t.database.schema });
    const other = await PostgresEventStore.open(otherDatabase);
    const [foreign] = await other.appendMany([
      { streamId: 'other', expectedVersion: 'no_stream', events: [{ type: 'Other', data: {} }] },
    ]);
    const foreignPosition = foreign!.events[0]!.position;
    await sleep(1500);
    const positionDuringLoad = relay.position;
    await running.stop();
    await relay.waitForPosition(Math.max(...running.all));
    await other.close();
    await otherDatabase.close();
    expectExactlyOnceInOrder(publisher);
    expect(positionDuringLoad).toBeGreaterThanOrEqual(foreignPosition);
  }, 30_000);
});
