import { randomUUID } from 'node:crypto';
import { envelopeJson, toEnvelope, type StoredEvent } from '../src/index.js';
import { appendedJsonOf } from '../src/adapters/postgres/appended-json.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

/**
 * `readAll({ jsonText: true })`, what the outbox relay reads: the events are those a plain read
 * returns, their data parsed only when used, and `envelopeJson` publishes the database's text.
 */
describe.each(DIALECTS)('reading events with their JSON text, on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
    t.store.registerUpcasters({ Renamed: { 1: (data: { old: string }) => ({ renamed: data.old }) } });
  });
  afterAll(async () => {
    await t.dispose();
  });

  const plainAndText = async (streamId: string): Promise<[StoredEvent[], StoredEvent[]]> => {
    const from = (await t.store.readStream(streamId))[0]!.position - 1;
    const mine = (events: StoredEvent[]) => events.filter((event) => event.streamId === streamId);
    return [
      mine(await t.store.readAll({ fromPosition: from })),
      mine(await t.store.readAll({ fromPosition: from, jsonText: true })),
    ];
  };

  it('reads the same events as a plain read, and their envelopes are the same JSON', async () => {
    const streamId = `execution-${randomUUID()}`;
    const data = [
      { text: "it's \\ \u00e9 \u{1F600} \n $1 -- /*", nested: { list: [1, 2.5, -3e-7, true, null], empty: {} } },
      null,
      'a string',
      [1, [2, [3]]],
      12345678901234,
    ];
    await t.store.append(
      streamId,
      data.map((value, index) => ({
        type: `Step${index}`,
        data: value,
        metadata: { organizationId: 'org-1', i: index },
      })),
    );
    const [plain, text] = await plainAndText(streamId);
    expect(text).toHaveLength(data.length);
    // The text read keeps the database's own text (jsonb's, spaced), the plain read none.
    expect(appendedJsonOf(text[0]!)?.data).toContain('"list": [1, 2.5');
    expect(appendedJsonOf(text[1]!)?.data).toBe('null');
    expect(appendedJsonOf(plain[0]!)).toBeUndefined();
    expect(text.map((event) => ({ ...event }))).toEqual(plain);
    for (const [index, event] of text.entries()) {
      expect(JSON.parse(envelopeJson(event))).toEqual(JSON.parse(JSON.stringify(toEnvelope(plain[index]!))));
    }
  });

  it('an event with a number jsonb writes out in full (1e21, 5e-324) is published as compact JSON', async () => {
    const streamId = `execution-${randomUUID()}`;
    await t.store.append(streamId, [
      { type: 'Big', data: { values: new Array(100).fill(5e-324) }, metadata: {} },
      { type: 'Large', data: { value: 1e21 }, metadata: {} },
      { type: 'Plain', data: { value: 1e20 }, metadata: {} },
    ]);
    const [plain, text] = await plainAndText(streamId);
    expect(appendedJsonOf(text[0]!)).toBeUndefined();
    expect(appendedJsonOf(text[1]!)).toBeUndefined();
    expect(appendedJsonOf(text[2]!)?.data).toBe('{"value": 100000000000000000000}');
    for (const [index, event] of text.entries()) {
      const compact = JSON.stringify(toEnvelope(plain[index]!));
      expect(envelopeJson(event).length).toBeLessThanOrEqual(compact.length + 20);
      expect(JSON.parse(envelopeJson(event))).toEqual(JSON.parse(compact));
    }
  });

  it('an upcaster that applies gives a new event, published with the upcast data, not the stored text', async () => {
    const streamId = `thing-${randomUUID()}`;
    await t.store.append(streamId, [{ type: 'Renamed', data: { old: 'x' }, metadata: {} }]);
    const [plain, [event]] = await plainAndText(streamId);
    expect(event!.data).toEqual({ renamed: 'x' });
    expect(event!.schemaVersion).toBe(2);
    expect(JSON.parse(envelopeJson(event!))).toEqual(JSON.parse(JSON.stringify(toEnvelope(plain[0]!))));
    expect(JSON.parse(envelopeJson(event!)).data).toEqual({ renamed: 'x' });
  });
});
