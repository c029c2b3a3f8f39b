import { appendedJsonOf } from '../src/adapters/postgres/appended-json.js';
import {
  OutboxRelay,
  toEnvelope,
  type EventMessage,
  type EventPublisher,
  type PublishOutcome,
  type StoredEvent,
} from '../src/index.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

/** A destination that keeps a message only where someone takes it (the embedded bus's interest retention). */
class InterestPublisher implements EventPublisher {
  readonly enforcesPreviousMsgId = false;
  readonly taken = new Set<string>();
  /** Subjects no one takes the first time they are asked about, and someone does after. */
  readonly takenAfterFirstAsk = new Set<string>();
  readonly published: { subject: string; message: EventMessage }[] = [];
  async publish(subject: string, message: EventMessage): Promise<PublishOutcome> {
    this.published.push({ subject, message });
    return {};
  }
  interested(subject: string): boolean {
    if (this.takenAfterFirstAsk.delete(subject)) {
      this.taken.add(subject);
      return false;
    }
    return this.taken.has(subject);
  }
  async lastPublishedPosition(): Promise<number> {
    return this.published.at(-1)?.message.position ?? 0;
  }
}

const appendOne = async (t: TestStore, streamId: string): Promise<StoredEvent> => {
  const [result] = await t.store.appendMany([
    { streamId, expectedVersion: 'no_stream', events: [{ type: 'Noted', data: { streamId, text: 'ü "q"' } }] },
  ]);
  return result!.events[0]!;
};

describe.each(DIALECTS)('the appended JSON kept for the outbox relay (%s)', (dialect) => {
  let t: TestStore;
  beforeEach(async () => {
    t = await openTestStore(dialect);
  });
  afterEach(async () => {
    await t.dispose();
  });

  test('an append keeps its texts only for events a started relay may publish; without a relay, for every event', async () => {
    const publisher = new InterestPublisher();
    const relay = new OutboxRelay(t.store, publisher, { pollMs: 20, subjectFor: (event) => event.streamId });
    expect(appendedJsonOf(await appendOne(t, 'before-start'))).toBeDefined();
    publisher.taken.add('taken');
    relay.start();
    try {
      const taken = await appendOne(t, 'taken');
      const passedOver = await appendOne(t, 'passed-over');
      expect(appendedJsonOf(taken)).toBeDefined();
      expect(appendedJsonOf(passedOver)).toBeUndefined();
      await relay.waitForPosition(passedOver.position);
      expect(publisher.published.map((p) => p.subject)).toEqual(['taken']);
    } finally {
      await relay.stop();
    }
    expect(appendedJsonOf(await appendOne(t, 'after-stop'))).toBeDefined();
  });

  test('an event with no taker at its append and one when the relay comes to it goes out as the database holds it', async () => {
    const publisher = new InterestPublisher();
    // Asked at the append first (no taker yet), then by the relay (a durable was created in between).
    publisher.takenAfterFirstAsk.add('late');
    let asked = 0;
    const relay = new OutboxRelay(t.store, publisher, {
      pollMs: 20,
      subjectFor: (event) => {
        // The appender changes its data object once the append has encoded it (first ask).
        if (event.streamId === 'late' && asked++ === 0) (event.data as { out: { n: number } }).out.n = 2;
        return event.streamId;
      },
    });
    relay.start();
    try {
      // Caught up first, so the relay takes the next append from memory, not from a read.
      await relay.waitForPosition((await appendOne(t, 'warm-up')).position);
      const [result] = await t.store.appendMany([
        { streamId: 'late', expectedVersion: 'no_stream', events: [{ type: 'Noted', data: { out: { n: 1 } } }] },
      ]);
      const late = result!.events[0]!;
      expect(late.data).toEqual({ out: { n: 2 } });
      expect(appendedJsonOf(late)).toBeUndefined();
      await relay.waitForPosition(late.position);
      expect(publisher.published.map(({ subject, message }) => [subject, message.position])).toEqual([
        ['late', late.position],
      ]);
      const sent = JSON.parse(publisher.published[0]!.message.json) as Record<string, unknown>;
      expect(sent).toEqual({ ...JSON.parse(JSON.stringify(toEnvelope(late))), data: { out: { n: 1 } } });
    } finally {
      await relay.stop();
    }
  });

  test("a relay's subject that throws does not fail the append: its texts are kept", async () => {
    const relay = new OutboxRelay(t.store, new InterestPublisher(), {
      pollMs: 20,
      subjectFor: () => {
        throw new Error('no subject');
      },
      onError: () => undefined,
    });
    relay.start();
    try {
      expect(appendedJsonOf(await appendOne(t, 'kept'))).toBeDefined();
    } finally {
      await relay.stop();
    }
  });

  test('a stopped relay cannot be started again (its loop would not run, yet appends would drop texts for it)', async () => {
    const relay = new OutboxRelay(t.store, new InterestPublisher(), { pollMs: 20 });
    relay.start();
    await relay.stop();
    expect(() => relay.start()).toThrow(/was stopped/);
    expect(appendedJsonOf(await appendOne(t, 'after-restart'))).toBeDefined();
  });
});
