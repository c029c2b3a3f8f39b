import type { StoredEvent } from '@weft/event-store';
import { KnownProcessRevisions } from '../src/application/known-process-revisions.js';

const committed = (streamId: string, streamVersion: number): StoredEvent => ({
  eventId: `e-${streamId}-${streamVersion}`,
  streamId,
  streamVersion,
  position: streamVersion,
  type: 'ProcessUpdated',
  schemaVersion: 1,
  data: {},
  metadata: {},
  recordedAt: new Date(),
});

/** A database read that answers `versions` and records each call; `hold` keeps answers back until `release`. */
function database(versions: Record<string, number>) {
  const reads: string[] = [];
  let gate: Promise<void> | undefined;
  let open = (): void => undefined;
  return {
    reads,
    hold: () => void (gate = new Promise<void>((resolve) => (open = resolve))),
    release: () => {
      open();
      gate = undefined;
    },
    read: async (processId: string) => {
      reads.push(processId);
      if (gate) await gate;
      return versions[processId] ?? 0;
    },
  };
}

describe('KnownProcessRevisions', () => {
  it('reads a process once, then follows its commits without reading again', async () => {
    const db = database({ a: 3 });
    const known = new KnownProcessRevisions(db.read);
    expect(await known.revisionOf('a')).toBe(3);
    known.observe([committed('process-a', 4), committed('execution-x', 9)]);
    expect(await known.revisionOf('a')).toBe(4);
    expect(await known.revisionOf('a')).toBe(4);
    expect(db.reads).toEqual(['a']);
  });

  it('knows a process first heard of by a commit without reading it', async () => {
    const db = database({});
    const known = new KnownProcessRevisions(db.read);
    known.observe([committed('process-new', 1)]);
    expect(await known.revisionOf('new')).toBe(1);
    expect(db.reads).toEqual([]);
  });

  it('forgets everything on an append of unknown outcome, and reads again', async () => {
    const db = database({ a: 2, b: 5 });
    const known = new KnownProcessRevisions(db.read);
    known.observe([committed('process-a', 1)]);
    await known.revisionOf('b');
    known.observe(undefined);
    expect(await known.revisionOf('a')).toBe(2);
    expect(await known.revisionOf('b')).toBe(5);
    expect(db.reads).toEqual(['b', 'a', 'b']);
  });

  it('keeps the newer of a read and a commit heard while the read was under way', async () => {
    const db = database({ a: 3 });
    const known = new KnownProcessRevisions(db.read);
    db.hold();
    const answer = known.revisionOf('a');
    known.observe([committed('process-a', 4)]);
    db.release();
    expect(await answer).toBe(4);
    expect(await known.revisionOf('a')).toBe(4);
    expect(db.reads).toEqual(['a']);
  });

  it('does not keep a read that began before an unknown outcome', async () => {
    const db = database({ a: 3 });
    const known = new KnownProcessRevisions(db.read);
    db.hold();
    const answer = known.revisionOf('a');
    known.observe(undefined);
    db.release();
    expect(await answer).toBe(3);
    await known.revisionOf('a');
    expect(db.reads).toEqual(['a', 'a']);
  });

  it('does not keep a read that began before an eviction: the commit heard meanwhile may be the one evicted', async () => {
    const db = database({ a: 4, b: 1, c: 1 });
    const known = new KnownProcessRevisions(db.read, 2);
    db.hold();
    const answer = known.revisionOf('a');
    known.observe([committed('process-a', 5), committed('process-b', 1), committed('process-c', 1)]);
    db.release();
    expect(await answer).toBe(4);
    db.reads.length = 0;
    await known.revisionOf('a');
    expect(db.reads).toEqual(['a']);
  });

  it('holds at most maxProcesses, dropping the least recently learned', async () => {
    const db = database({ a: 1, b: 1, c: 1 });
    const known = new KnownProcessRevisions(db.read, 2);
    await known.revisionOf('a');
    await known.revisionOf('b');
    await known.revisionOf('c');
    await known.revisionOf('a');
    expect(db.reads).toEqual(['a', 'b', 'c', 'a']);
  });
});
