import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  openDatabase,
  OutboxRelay,
  PostgresEventStore,
  RELAY_LOCK_NAMESPACE,
  toEnvelope,
  type EventMessage,
  type EventPublisher,
  type NewEvent,
  type OutboxRelayOptions,
  type PublishOutcome,
  type StoredEvent,
} from '../src/index.js';
import { advanceCheckpoint } from '../src/subscriptions/checkpoint-table.js';
import { DIALECTS, openTestStore, testDatabaseUrl, type TestStore } from './support/test-database.js';
import { openTestJetStream, type TestJetStream } from './support/test-jetstream.js';

const executionEvents = (n: number, organizationId = 'org-1'): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'NodeCompleted',
    data: { i },
    metadata: { organizationId, processId: 'proc-1' },
  }));

/**
 * Wraps the real publisher and fails at a chosen call (a publish or an unacknowledged send), as a
 * killed relay or a lost message would:
 * 'die': every call after `failAfter` fails before reaching NATS;
 * 'drop-one': only call `failAfter + 1` fails (a send is lost silently), the calls after it do reach NATS;
 * 'lose-ack': call `failAfter` is stored, but the relay sees an error;
 * 'say-duplicate': call `failAfter` is stored, but answered as a duplicate.
 */
class FailingPublisher implements EventPublisher {
  private calls = 0;
  readonly enforcesPreviousMsgId: boolean | undefined;
  readonly send: EventPublisher['send'];
  /** What each call was, in order: acknowledged publishes and unacknowledged sends. */
  readonly kinds: ('publish' | 'send')[] = [];
  constructor(
    private readonly inner: EventPublisher,
    private readonly failAfter: number,
    private readonly mode: 'die' | 'drop-one' | 'lose-ack' | 'say-duplicate',
    /** false: publish as a destination without the predecessor check (the in-memory bus). */
    pipelined = true,
  ) {
    this.enforcesPreviousMsgId = pipelined && inner.enforcesPreviousMsgId;
    const send = pipelined ? inner.send?.bind(inner) : undefined;
    this.send = send && ((...args) => this.sendThrough(send, ...args));
  }
  async publish(subject: string, message: EventMessage, msgId: string, previous?: string): Promise<PublishOutcome> {
    const call = this.call('publish');
    if (this.mode === 'die' && call > this.failAfter) throw new Error('relay killed');
    if (this.mode === 'drop-one' && call === this.failAfter + 1) throw new Error('message lost');
    const outcome = await this.inner.publish(subject, message, msgId, previous);
    if (this.mode === 'lose-ack' && call === this.failAfter) throw new Error('ack lost');
    if (this.mode === 'say-duplicate' && call === this.failAfter) return { duplicate: true };
    return outcome;
  }
  private sendThrough(send: NonNullable<EventPublisher['send']>, ...args: Parameters<typeof send>): void {
    const call = this.call('send');
    if (this.mode === 'die' && call > this.failAfter) throw new Error('relay killed');
    if (this.mode === 'drop-one' && call === this.failAfter + 1) return;
    send(...args);
  }
  private call(kind: 'publish' | 'send'): number {
    this.kinds.push(kind);
    return (this.calls += 1);
  }
  lastPublishedPosition(): Promise<number> {
    return this.inner.lastPublishedPosition();
  }
}

/** Counts the events the store's readAll returns (the relay reading the database) until restored. */
const countReads = (store: PostgresEventStore): { calls: number; events: number; restore(): void } => {
  const readAll = store.readAll.bind(store);
  const reads = { calls: 0, events: 0, restore: () => Reflect.deleteProperty(store, 'readAll') };
  store.readAll = async (...args) => {
    reads.calls += 1;
    const events = await readAll(...args);
    reads.events += events.length;
    return events;
  };
  return reads;
};

const expectEachPositionOnceInOrder = async (js: TestJetStream, committed: StoredEvent[]) => {
  const messages = await js.messages();
  expect(messages.map((m) => m.position)).toEqual(committed.map((e) => e.position));
  expect(messages.map((m) => m.msgId)).toEqual(committed.map((e) => `weft-event-${e.position}`));
  expect(messages.map((m) => m.envelope)).toEqual(committed.map((e) => JSON.parse(JSON.stringify(toEnvelope(e)))));
  expect(messages.map((m) => m.subject)).toEqual(committed.map((e) => js.subjectFor(e)));
};

describe.each(DIALECTS)('OutboxRelay to JetStream, store on %s', (dialect) => {
  let t: TestStore;
  let js: TestJetStream;
  const relays: OutboxRelay[] = [];
  const relayOptions = (): OutboxRelayOptions => ({
    name: `relay-${randomUUID()}`,
    subjectFor: (event) => js.subjectFor(event),
    pollMs: 20,
    standbyMs: 20,
    batchSize: 10,
  });
  const checkpointOf = async (name: string) =>
    Number(
      (
        await sql<{ position: string }>`SELECT position FROM subscription_checkpoints WHERE name = ${name}`.execute(
          t.store.db,
        )
      ).rows[0]?.position ?? 0,
    );
  const startRelay = (publisher: EventPublisher, options: OutboxRelayOptions) => {
    const relay = new OutboxRelay(t.store, publisher, options);
    relays.push(relay);
    relay.start();
    return relay;
  };

  beforeEach(async () => {
    t = await openTestStore(dialect);
    js = await openTestJetStream();
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((relay) => relay.stop()));
    await js.dispose();
    await t.dispose();
  });

  it('publishes every committed event once, in position order, including ones appended while it runs', async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(12));
    await t.store.append(`process-${randomUUID()}`, [
      { type: 'ProcessCreated', data: { name: 'x' }, metadata: { organizationId: 'org-2' } },
    ]);
    const relay = startRelay(await js.publisher(), relayOptions());
    await relay.waitForPosition(await t.store.headPosition());
    await t.store.appendMany([
      { streamId: `execution-${randomUUID()}`, events: executionEvents(5) },
      { streamId: `execution-${randomUUID()}`, events: executionEvents(4) },
    ]);
    await relay.waitForPosition(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
    expect((await js.messages())[0]!.subject).toBe(`${js.prefix}.execution.org-1.proc-1.NodeCompleted`);
  });

  it('writes its checkpoint at most once per checkpointEveryMs while publishing, and the last one at stop', async () => {
    const options = { ...relayOptions(), checkpointEveryMs: 60_000 };
    const checkpoint = () => checkpointOf(options.name!);
    await t.store.append(`execution-${randomUUID()}`, executionEvents(3));
    const relay = startRelay(await js.publisher(), options);
    await relay.waitForPosition(await t.store.headPosition());
    const first = await checkpoint();
    // Three more batches within the interval: published, but no checkpoint written for them.
    for (let i = 0; i < 3; i++) {
      await t.store.append(`execution-${randomUUID()}`, executionEvents(2));
      await relay.waitForPosition(await t.store.headPosition());
    }
    expect(await checkpoint()).toBe(first);
    await relay.stop();
    expect(await checkpoint()).toBe(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('saves the checkpoint the last batches left behind once the interval is up, with no event to come', async () => {
    const options = { ...relayOptions(), checkpointEveryMs: 1000 };
    await t.store.append(`execution-${randomUUID()}`, executionEvents(3));
    const relay = startRelay(await js.publisher(), options);
    await relay.waitForPosition(await t.store.headPosition());
    // Within the interval of the first save (the first batch's): published, not saved with it.
    await t.store.append(`execution-${randomUUID()}`, executionEvents(2));
    const head = await t.store.headPosition();
    await relay.waitForPosition(head);
    for (let waited = 0; (await checkpointOf(options.name!)) !== head && waited < 5000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await checkpointOf(options.name!)).toBe(head);
    expect(relay.isLeader).toBe(true);
  });

  it("a relay's checkpoint never moves back (a relay that lost its lead may still save an older one)", async () => {
    const name = `relay-${randomUUID()}`;
    await advanceCheckpoint(t.store.db, 'subscription_checkpoints', name, 10);
    await advanceCheckpoint(t.store.db, 'subscription_checkpoints', name, 5);
    expect(await checkpointOf(name)).toBe(10);
    await advanceCheckpoint(t.store.db, 'subscription_checkpoints', name, 12);
    expect(await checkpointOf(name)).toBe(12);
  });

  it('relay killed between commit and publish: a new relay publishes every position exactly once', async () => {
    const options = relayOptions();
    // Committed while no relay runs.
    await t.store.append(`execution-${randomUUID()}`, executionEvents(25));
    // The first relay publishes 13 events and dies before it stores any checkpoint.
    const dying = new FailingPublisher(await js.publisher(), 13, 'die');
    const errors: unknown[] = [];
    const first = startRelay(dying, { ...options, onError: (error) => errors.push(error) });
    while (errors.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await first.stop();
    expect((await js.messages()).length).toBe(13);

    await t.store.append(`execution-${randomUUID()}`, executionEvents(6));
    const second = startRelay(await js.publisher(), options);
    await second.waitForPosition(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('a publish that reached the stream but whose ack was lost is not repeated', async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(8));
    const relay = startRelay(new FailingPublisher(await js.publisher(), 3, 'lose-ack'), relayOptions());
    await relay.waitForPosition(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('without the predecessor check, publishes one at a time, so a lost message is never overtaken', async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(9));
    const relay = startRelay(new FailingPublisher(await js.publisher(), 4, 'drop-one', false), relayOptions());
    await relay.waitForPosition(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('a message lost in the middle of a pipelined batch is never overtaken by the ones after it', async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(9));
    const errors: unknown[] = [];
    const relay = startRelay(new FailingPublisher(await js.publisher(), 4, 'drop-one'), {
      ...relayOptions(),
      onError: (error) => errors.push(error),
    });
    await relay.waitForPosition(await t.store.headPosition());
    // The lost one, and the server's refusal of its successors (wrong last message id).
    expect(errors.length).toBeGreaterThanOrEqual(1);
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('sends a batch unacknowledged up to its last message, whose acknowledged publish confirms it', async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(9));
    const publisher = new FailingPublisher(await js.publisher(), Infinity, 'die');
    const relay = startRelay(publisher, relayOptions());
    await relay.waitForPosition(await t.store.headPosition());
    expect(publisher.kinds).toEqual([...Array<string>(8).fill('send'), 'publish']);
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('a message lost from an unacknowledged batch fails its last; the batch goes again acknowledged', async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(9));
    const errors: unknown[] = [];
    const publisher = new FailingPublisher(await js.publisher(), 3, 'drop-one');
    const relay = startRelay(publisher, { ...relayOptions(), onError: (error) => errors.push(error) });
    await relay.waitForPosition(await t.store.headPosition());
    // The stream refused the last message: its predecessor was not the stream's last.
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/wrong last msg ?id/i);
    // Sends 1-3 were stored, 4 was lost, 5-8 and the last (a publish) were refused; then events
    // 4-9 went again, one acknowledged publish each.
    expect(publisher.kinds).toEqual([...Array<string>(8).fill('send'), ...Array<string>(7).fill('publish')]);
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it("a batch whose last message is answered as a duplicate is not taken as confirmed: the relay resumes from the stream's last", async () => {
    await t.store.append(`execution-${randomUUID()}`, executionEvents(9));
    const errors: unknown[] = [];
    const publisher = new FailingPublisher(await js.publisher(), 9, 'say-duplicate');
    const relay = startRelay(publisher, { ...relayOptions(), onError: (error) => errors.push(error) });
    await relay.waitForPosition(await t.store.headPosition());
    expect(errors.map(String)).toEqual([expect.stringContaining('the batch is unconfirmed')]);
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('only one relay publishes at a time; a standby takes over when the leader stops', async () => {
    const options = relayOptions();
    await t.store.append(`execution-${randomUUID()}`, executionEvents(10));
    const a = startRelay(await js.publisher(), options);
    const b = startRelay(await js.publisher(), options);
    while (!a.isLeader && !b.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
    const [leader, standby] = a.isLeader ? [a, b] : [b, a];
    await leader.waitForPosition(await t.store.headPosition());
    expect(standby.isLeader).toBe(false);
    expect(standby.position).toBe(0);

    await leader.stop();
    await t.store.append(`execution-${randomUUID()}`, executionEvents(7));
    await standby.waitForPosition(await t.store.headPosition());
    expect(standby.isLeader).toBe(true);
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('publishes its own appends as committed, without reading them back', async () => {
    // No polling: a read now happens only when the committed events cannot vouch for the next position.
    const reads = countReads(t.store);
    const relay = startRelay(await js.publisher(), { ...relayOptions(), pollMs: 60_000 });
    await t.store.append(`execution-${randomUUID()}`, executionEvents(2));
    await relay.waitForPosition(await t.store.headPosition());
    // Its one read at start (what was committed before it took over is not in hand).
    while (reads.calls === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    reads.events = 0;
    for (let i = 0; i < 5; i++) {
      await t.store.appendMany([
        { streamId: `execution-${randomUUID()}`, events: executionEvents(3) },
        { streamId: `execution-${randomUUID()}`, events: executionEvents(14) },
      ]);
    }
    await relay.waitForPosition(await t.store.headPosition());
    expect(reads.events).toBe(0);
    reads.restore();
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('reads a backlog batch after batch without waiting for a poll between them', async () => {
    for (let i = 0; i < 10; i++) await t.store.append(`execution-${randomUUID()}`, executionEvents(10));
    // Ten batches of ten: with a poll of a minute between batches this would outlast the test.
    const relay = startRelay(await js.publisher(), { ...relayOptions(), pollMs: 60_000 });
    await relay.waitForPosition(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('a standby on the same store that fails to lead does not stop the leader taking its appends', async () => {
    const options = { ...relayOptions(), pollMs: 60_000 };
    await t.store.append(`execution-${randomUUID()}`, executionEvents(1));
    const a = startRelay(await js.publisher(), options);
    const b = startRelay(await js.publisher(), options);
    while (!a.isLeader && !b.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
    const leader = a.isLeader ? a : b;
    for (let i = 0; i < 10; i++) {
      await t.store.append(`execution-${randomUUID()}`, executionEvents(2));
      // The standby retries its lock every 20 ms meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    await leader.waitForPosition(await t.store.headPosition());
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  it('a position its own appends skipped (a rolled-back append) is read, and nothing is missed', async () => {
    const relay = startRelay(await js.publisher(), { ...relayOptions(), pollMs: 60_000 });
    const streamId = `execution-${randomUUID()}`;
    await t.store.append(streamId, executionEvents(2));
    await relay.waitForPosition(await t.store.headPosition());
    const reads = countReads(t.store);
    // What a rolled-back insert leaves: positions drawn from the sequence and never committed.
    await sql`SELECT nextval(pg_get_serial_sequence('events', 'position')) FROM generate_series(1, 3)`.execute(
      t.store.db,
    );
    await t.store.append(streamId, executionEvents(2), { expectedVersion: 2 });
    await relay.waitForPosition(await t.store.headPosition());
    // The read after the gap brings the two events of the append after it.
    expect(reads.events).toBe(2);
    reads.restore();
    await expectEachPositionOnceInOrder(js, await t.store.readAll());
  });

  if (dialect === 'postgres') {
    it("reads another process's appends between its own, in one order", async () => {
      const otherDatabase = await openDatabase({ url: testDatabaseUrl(), schema: t.database.schema });
      const other = await PostgresEventStore.open(otherDatabase);
      try {
        // Only NOTIFY wakes it for the other process's events (no polling).
        const relay = startRelay(await js.publisher(), { ...relayOptions(), pollMs: 60_000 });
        for (let i = 0; i < 6; i++) {
          const store = i % 3 === 1 ? other : t.store;
          await store.append(`execution-${randomUUID()}`, executionEvents(4));
        }
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? other : t.store).append(`execution-${randomUUID()}`, executionEvents(3)),
          ),
        );
        await relay.waitForPosition(await t.store.headPosition());
        await expectEachPositionOnceInOrder(js, await t.store.readAll());
      } finally {
        await other.close();
        await otherDatabase.close();
      }
    });

    it('a leader whose lock connection dies stops publishing, and the standby takes over', async () => {
      const options = relayOptions();
      await t.store.append(`execution-${randomUUID()}`, executionEvents(10));
      const a = startRelay(await js.publisher(), options);
      const b = startRelay(await js.publisher(), options);
      while (!a.isLeader && !b.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
      const [leader, standby] = a.isLeader ? [a, b] : [b, a];
      await leader.waitForPosition(await t.store.headPosition());

      const { rows } = await sql<{ pid: number }>`
        SELECT pid FROM pg_locks
        WHERE locktype = 'advisory' AND classid = ${RELAY_LOCK_NAMESPACE} AND objid = ${t.store.eventsTableOid}
          AND granted`.execute(t.store.db);
      expect(rows).toHaveLength(1);
      await sql`SELECT pg_terminate_backend(${rows[0]!.pid})`.execute(t.store.db);

      await t.store.append(`execution-${randomUUID()}`, executionEvents(7));
      await standby.waitForPosition(await t.store.headPosition());
      while (leader.isLeader) await new Promise((resolve) => setTimeout(resolve, 10));
      await expectEachPositionOnceInOrder(js, await t.store.readAll());
    });
  }
});
