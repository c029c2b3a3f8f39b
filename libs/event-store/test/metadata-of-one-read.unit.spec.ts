import {
  metadataParserOfOneRead,
  toStoredEventParsedLazily,
  type EventTextRow,
} from '../src/adapters/postgres/event-rows.js';

const row = (position: number, metadata: string): EventTextRow => ({
  position: String(position),
  stream_id: `execution-${position}`,
  stream_version: 1,
  event_id: `0190f5e2-0000-7000-8000-00000000000${position}`,
  type: 'NodeCompleted',
  schema_version: 1,
  data: '{"n":1}',
  metadata,
  recorded_at: new Date('2026-11-29T21:00:00.000Z'),
});

describe('metadata of events read as JSON text', () => {
  it("is parsed once for a run's events next to each other, and again for another text", () => {
    const parse = metadataParserOfOneRead();
    const run = '{"organizationId":"o-1","processId":"p-1","traceId":"t-1"}';
    const [first, second, other, third] = [
      row(1, run),
      row(2, run.slice()),
      row(3, '{"organizationId":"o-2"}'),
      row(4, run),
    ].map((each) => toStoredEventParsedLazily(each, parse));
    expect(first!.metadata).toEqual({ organizationId: 'o-1', processId: 'p-1', traceId: 't-1' });
    expect(second!.metadata).toBe(first!.metadata);
    expect(other!.metadata).toEqual({ organizationId: 'o-2' });
    expect(third!.metadata).toEqual(first!.metadata);
    expect(third!.metadata).not.toBe(first!.metadata);
  });

  it('is parsed for each event of its own without a shared parser', () => {
    const text = '{"organizationId":"o-1"}';
    const [first, second] = [row(1, text), row(2, text)].map((each) => toStoredEventParsedLazily(each));
    expect(first!.metadata).toEqual(second!.metadata);
    expect(first!.metadata).not.toBe(second!.metadata);
  });
});
