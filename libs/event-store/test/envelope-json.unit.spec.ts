import { appendStatement } from '../src/adapters/postgres/append-statement.js';
import { appendedJsonOf } from '../src/adapters/postgres/appended-json.js';
import { envelopeJson, toEnvelope, type StoredEvent } from '../src/index.js';

const event = (streamVersion: number, data: unknown, metadata: Record<string, unknown>): StoredEvent => ({
  eventId: `0190f5e2-0000-7000-8000-00000000000${streamVersion}`,
  streamId: 'execution-"quoted"\u2028id',
  streamVersion,
  position: 40 + streamVersion,
  type: 'NodeCompleted',
  schemaVersion: 2,
  data,
  metadata,
  recordedAt: new Date('2026-11-28T17:00:00.123Z'),
});

const values = [
  { output: { text: 'naïve "quote" \\ \u0000 \ud83d\ude00', n: 1.5e-7, list: [1, null, { deep: true }] } },
  null,
  'a string',
  [],
  { when: new Date('2026-01-02T03:04:05.000Z'), skipped: undefined },
];

describe('envelopeJson', () => {
  it.each([
    ['the recordset form (version checks)', [{ s: 'execution-x', v: 0, x: 0 as const }]],
    ['the VALUES form (nothing checked)', []],
  ])('is JSON.stringify of the envelope, from the texts %s sent to the database', (_form, checks) => {
    const shared = { traceId: 'abc', actor: { userId: 'u-1' } };
    const events = values.map((data, index) => event(index + 1, data, index % 2 ? shared : { other: index }));
    appendStatement(events, checks, []);
    for (const appended of events) {
      expect(appendedJsonOf(appended)).toBeDefined();
      expect(envelopeJson(appended)).toBe(JSON.stringify(toEnvelope(appended)));
    }
  });

  it('keeps no text for data JSON has none for, and encodes such an event as JSON.stringify does', () => {
    const odd = event(1, () => 'not JSON', { traceId: 't' });
    appendStatement([odd], [{ s: 'execution-x', v: 0, x: 0 }], []);
    expect(appendedJsonOf(odd)).toBeUndefined();
    expect(envelopeJson(odd)).toBe(JSON.stringify(toEnvelope(odd)));
  });

  it('encodes an event it did not append (read back from the table) as JSON.stringify does', () => {
    const read = event(1, { a: 1 }, { traceId: 't' });
    expect(appendedJsonOf(read)).toBeUndefined();
    expect(envelopeJson(read)).toBe(JSON.stringify(toEnvelope(read)));
  });
});
