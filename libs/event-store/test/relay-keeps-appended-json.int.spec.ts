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

  test('an event with no taker when appended and one when the relay comes to it is published, encoded by the relay', async () => {
    const publisher = new InterestPublisher();
    // Asked at the append first (no taker yet), then by the relay (a durable was created in between).
    publisher.takenAfterFirstAsk.add('late');
    const relay = new OutboxRelay(t.store, publisher, { pollMs: 20, subjectFor: (event) => event.streamId });
    relay.start();
    try {
      const late = await appendOne(t, 'late');
      expect(appendedJsonOf(late)).toBeUndefined();
      await relay.waitForPosition(late.position);
      // From memory it is encoded as JSON.stringify does; read back (PGlite), as the database's text.
      expect(publisher.published.map(({ subject, message }) => [subject, message.position])).toEqual([
        ['late', late.position],
      ]);
      expect(JSON.parse(publisher.published[0]!.message.json)).toEqual(JSON.parse(JSON.stringify(toEnvelope(late))));
    } finally {
      await relay.stop();
    }
  });
});
