import { randomUUID } from 'node:crypto';
import { OutboxRelay, type EventPublisher, type StoredEvent } from '../src/index.js';
import { openTestStore, type TestStore } from './support/test-database.js';
import { openTestJetStream, type TestJetStream } from './support/test-jetstream.js';

/** An event bigger than the NATS server's max_payload (1 MB by default) must not stall the relay. */
describe('OutboxRelay with an event larger than NATS max_payload', () => {
  let t: TestStore;
  let js: TestJetStream;
  let relay: OutboxRelay | undefined;

  beforeEach(async () => {
    t = await openTestStore('postgres');
    js = await openTestJetStream();
  });
  afterEach(async () => {
    await relay?.stop();
    await js.dispose();
    await t.dispose();
  });

  /** Runs a relay of the test's own until it published everything appended; the placeholders it made. */
  const publishAll = async (publisher: EventPublisher): Promise<{ event: StoredEvent; reason: string }[]> => {
    const placeholders: { event: StoredEvent; reason: string }[] = [];
    relay = new OutboxRelay(t.store, publisher, {
      name: `relay-${randomUUID()}`,
      subjectFor: (event) => js.subjectFor(event),
      pollMs: 20,
      onPlaceholder: (event, reason) => placeholders.push({ event, reason }),
    });
    relay.start();
    await relay.waitForPosition(await t.store.headPosition());
    return placeholders;
  };

  test('publishes a placeholder at its position and every later event after it', async () => {
    const maxPayload = js.nc.info!.max_payload;
    const stream = `execution-${randomUUID()}`;
    const metadata = { organizationId: 'org-1', processId: 'proc-1' };
    await t.store.append(stream, [
      { type: 'NodeCompleted', data: { i: 0 }, metadata },
      { type: 'NodeCompleted', data: { blob: 'x'.repeat(maxPayload + 1) }, metadata },
    ]);
    await t.store.append(stream, [
      { type: 'NodeCompleted', data: { i: 2 }, metadata },
      { type: 'NodeCompleted', data: { i: 3 }, metadata },
    ]);
    const placeholders = await publishAll(await js.publisher());

    const committed = await t.store.readAll();
    const messages = await js.messages();
    expect(messages.map((m) => m.position)).toEqual(committed.map((e) => e.position));
    expect(messages.map((m) => m.envelope.data)).toEqual([{ i: 0 }, null, { i: 2 }, { i: 3 }]);
    const gap = messages[1]!.envelope;
    expect(gap).toMatchObject({
      eventId: committed[1]!.eventId,
      type: 'NodeCompleted',
      position: committed[1]!.position,
      truncated: true,
      reason: expect.stringContaining('max_payload'),
    });
    expect(messages[1]!.subject).toBe(js.subjectFor(committed[1]!));
    expect(placeholders.map((p) => p.event.position)).toEqual([committed[1]!.position]);
  });

  test("an event over the stream's own max_msg_size gets a placeholder too, and the relay goes on", async () => {
    const publisher = await js.publisher();
    // An operator's limit below the server's max_payload: only the stream knows it.
    await js.jsm.streams.update(js.stream, { max_msg_size: 4096 });
    const stream = `execution-${randomUUID()}`;
    const metadata = { organizationId: 'org-1', processId: 'proc-1' };
    await t.store.append(stream, [
      { type: 'NodeCompleted', data: { i: 0 }, metadata },
      { type: 'NodeCompleted', data: { i: 1 }, metadata },
      { type: 'NodeCompleted', data: { blob: 'x'.repeat(8192) }, metadata },
      { type: 'NodeCompleted', data: { i: 3 }, metadata },
      { type: 'NodeCompleted', data: { i: 4 }, metadata },
    ]);
    const placeholders = await publishAll(publisher);
    const committed = await t.store.readAll();
    const messages = await js.messages();
    expect(messages.map((m) => m.position)).toEqual(committed.map((e) => e.position));
    expect(messages.map((m) => m.envelope.data)).toEqual([{ i: 0 }, { i: 1 }, null, { i: 3 }, { i: 4 }]);
    expect(messages[2]!.envelope).toMatchObject({ truncated: true, reason: expect.stringContaining('maximum') });
    expect(placeholders.map(({ event }) => event.position)).toEqual([committed[2]!.position]);
  });

  test("when the stream's max_msg_size refuses even the placeholder's metadata, a minimal placeholder takes the position", async () => {
    const publisher = await js.publisher();
    await js.jsm.streams.update(js.stream, { max_msg_size: 700 });
    const stream = `execution-${randomUUID()}`;
    const metadata = { organizationId: 'org-1', processId: 'proc-1', note: 'm'.repeat(1000) };
    await t.store.append(stream, [
      { type: 'NodeCompleted', data: { blob: 'x'.repeat(2000) }, metadata },
      { type: 'NodeCompleted', data: { i: 1 }, metadata: { organizationId: 'org-1', processId: 'proc-1' } },
    ]);
    const placeholders = await publishAll(publisher);
    const committed = await t.store.readAll();
    const messages = await js.messages();
    expect(messages.map((m) => m.position)).toEqual(committed.map((e) => e.position));
    expect(messages[0]!.envelope).toMatchObject({
      eventId: committed[0]!.eventId,
      position: committed[0]!.position,
      data: null,
      metadata: {},
      truncated: true,
    });
    expect(messages[1]!.envelope.data).toEqual({ i: 1 });
    // Reported once, when published: not at every attempt.
    expect(placeholders.map(({ event }) => event.position)).toEqual([committed[0]!.position]);
  });

  test('an event whose database text is over max_payload but whose compact JSON fits is published whole', async () => {
    const maxPayload = js.nc.info!.max_payload;
    const stream = `execution-${randomUUID()}`;
    // jsonb prints `[0, 0, ...]`: 3 bytes an element against 2 compact.
    const zeros = new Array<number>(Math.floor((maxPayload * 0.8) / 2)).fill(0);
    const metadata = { organizationId: 'org-1', processId: 'proc-1' };
    await t.store.append(stream, [{ type: 'NodeCompleted', data: { zeros }, metadata }]);
    // Started after the append: the relay reads the event from the table, as the database's text.
    const placeholders = await publishAll(await js.publisher());
    const messages = await js.messages();
    expect(placeholders).toEqual([]);
    expect(messages).toHaveLength(1);
    expect((messages[0]!.envelope.data as { zeros: number[] }).zeros).toHaveLength(zeros.length);
  });
});
