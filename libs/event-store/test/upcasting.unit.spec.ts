import { mergeUpcasters, upcastEvent, type StoredEvent, type Upcasters } from '../src/index.js';

const storedEvent = (type: string, schemaVersion: number, data: unknown): StoredEvent => ({
  eventId: '00000000-0000-4000-8000-000000000001',
  streamId: 'process-1',
  streamVersion: 1,
  position: 1,
  type,
  schemaVersion,
  data,
  metadata: {},
  recordedAt: new Date('2026-01-01T00:00:00Z'),
});

// ProcessRenamed v1 {name} -> v2 {title} -> v3 {title, slug}
const upcasters: Upcasters = {
  ProcessRenamed: {
    1: (data: { name: string }) => ({ title: data.name }),
    2: (data: { title: string }) => ({ title: data.title, slug: data.title.toLowerCase() }),
  },
};

describe('upcastEvent', () => {
  it('lifts a v1 event through every later upcaster and reports the version reached', () => {
    const event = upcastEvent(storedEvent('ProcessRenamed', 1, { name: 'Invoices' }), upcasters);
    expect(event.data).toEqual({ title: 'Invoices', slug: 'invoices' });
    expect(event.schemaVersion).toBe(3);
  });

  it('starts from the stored version', () => {
    const event = upcastEvent(storedEvent('ProcessRenamed', 2, { title: 'Mail' }), upcasters);
    expect(event.data).toEqual({ title: 'Mail', slug: 'mail' });
    expect(event.schemaVersion).toBe(3);
  });

  it('returns current-version and unknown-type events unchanged', () => {
    const current = storedEvent('ProcessRenamed', 3, { title: 'A', slug: 'a' });
    const other = storedEvent('ProcessLocked', 1, { locked: true });
    expect(upcastEvent(current, upcasters)).toBe(current);
    expect(upcastEvent(other, upcasters)).toBe(other);
  });

  it('leaves the data of a current-version event unread (events read as JSON text parse it on use)', () => {
    let reads = 0;
    const current = storedEvent('ProcessRenamed', 3, undefined);
    Object.defineProperty(current, 'data', {
      get: () => {
        reads += 1;
        return { title: 'A', slug: 'a' };
      },
    });
    expect(upcastEvent(current, upcasters)).toBe(current);
    expect(reads).toBe(0);
  });

  it('does not mutate the stored event', () => {
    const original = storedEvent('ProcessRenamed', 1, { name: 'X' });
    upcastEvent(original, upcasters);
    expect(original.data).toEqual({ name: 'X' });
    expect(original.schemaVersion).toBe(1);
  });
});

describe('mergeUpcasters', () => {
  it('combines sets and refuses a second upcaster for the same type and version', () => {
    const into: Upcasters = {};
    mergeUpcasters(into, upcasters);
    mergeUpcasters(into, { NodeAdded: { 1: (data) => data } });
    expect(Object.keys(into).sort()).toEqual(['NodeAdded', 'ProcessRenamed']);
    expect(() => mergeUpcasters(into, { ProcessRenamed: { 1: (data) => data } })).toThrow(/registered twice/);
  });
});
