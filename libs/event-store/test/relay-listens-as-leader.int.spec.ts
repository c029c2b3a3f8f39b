import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openDatabase, OutboxRelay, PostgresEventStore, type NewEvent } from '../src/index.js';
import { openTestStore, testDatabaseUrl, type TestStore } from './support/test-database.js';
import { openTestJetStream, type TestJetStream } from './support/test-jetstream.js';

const events = (n: number): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'NodeCompleted',
    data: { i },
    metadata: { organizationId: 'org-1', processId: 'proc-1' },
  }));

/**
 * Every commit wakes every connection that LISTENs on the events channel (PostgreSQL signals each
 * one's backend, which wakes its process). Only the relay's leader reads the table, so only it
 * listens: distributed, one connection instead of one per service.
 */
describe('who listens for appends (PostgreSQL)', () => {
  let t: TestStore;
  let js: TestJetStream;
  const closers: Array<() => Promise<void>> = [];

  /** Sessions listening on the store's channel: their last statement was the LISTEN. */
  const listening = async (): Promise<number> => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = ${`LISTEN "${t.store.notifyChannel}"`}`.execute(
      t.store.db,
    );
    return rows[0]!.n;
  };

  /** A second process's store on the same tables. */
  const otherStore = async (onlyWriter = false): Promise<PostgresEventStore> => {
    const opened = await openDatabase({ url: testDatabaseUrl(), schema: t.database.schema });
    const store = await PostgresEventStore.open(onlyWriter ? { ...opened, onlyWriter: true } : opened);
    closers.push(async () => {
      await store.close();
      await opened.close();
    });
    return store;
  };

  beforeEach(async () => {
    t = await openTestStore('postgres');
    js = await openTestJetStream();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await js.dispose();
    await t.dispose();
  });

  it('a standby does not listen; the relay that takes over does, and hears the other process', async () => {
    const otherStoreOfB = await otherStore();
    // No polling: after the takeover only a NOTIFY can bring the other store's appends in time.
    const options = { name: `relay-${randomUUID()}`, subjectFor: js.subjectFor, pollMs: 60_000, standbyMs: 20 };
    const a = new OutboxRelay(t.store, await js.publisher(), options);
    const b = new OutboxRelay(otherStoreOfB, await js.publisher(), options);
    closers.push(
      () => a.stop(),
      () => b.stop(),
    );
    a.start();
    while (!a.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
    b.start();
    // b tries its lock every 20 ms meanwhile; a's store listens, b's does not.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(b.isLeader).toBe(false);
    expect(await listening()).toBe(1);

    await a.stop();
    while (!b.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
    // Appended by a's process: b can only learn of it by its NOTIFY.
    const { events: appended } = await t.store.append(`execution-${randomUUID()}`, events(3));
    await b.waitForPosition(appended[2]!.position);
    expect(await listening()).toBe(2);
  });

  it('a lost listening connection is taken up again, and what came meanwhile is read', async () => {
    const appender = await otherStore();
    const relay = new OutboxRelay(t.store, await js.publisher(), {
      name: `relay-${randomUUID()}`,
      subjectFor: js.subjectFor,
      pollMs: 60_000,
    });
    closers.push(() => relay.stop());
    relay.start();
    while ((await listening()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // The listening backend dies (a restarted server, an administrator's pg_terminate_backend).
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = ${`LISTEN "${t.store.notifyChannel}"`}`.execute(
      t.store.db,
    );
    const { events: meanwhile } = await appender.append(`execution-${randomUUID()}`, events(1));
    // Read on the loss, without the minute's poll.
    await relay.waitForPosition(meanwhile[0]!.position);
    // Listening again within a few seconds, and the other process's appends are heard at once.
    for (let wait = 0; wait < 100 && (await listening()) === 0; wait++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await listening()).toBe(1);
    const { events: after } = await appender.append(`execution-${randomUUID()}`, events(2));
    await relay.waitForPosition(after[1]!.position);
  });

  it('the only writer of its database never listens: its own appends wake its loops', async () => {
    const only = await otherStore(true);
    const relay = new OutboxRelay(only, await js.publisher(), {
      name: `relay-${randomUUID()}`,
      subjectFor: js.subjectFor,
      pollMs: 60_000,
    });
    closers.push(() => relay.stop());
    relay.start();
    while (!relay.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
    const { events: appended } = await only.append(`execution-${randomUUID()}`, events(2));
    await relay.waitForPosition(appended[1]!.position);
    expect(await listening()).toBe(0);
  });
});
