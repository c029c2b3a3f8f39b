import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { WrongExpectedVersionError, type AppendResult, type NewEvent, type StreamAppend } from '../src/index.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

const event = (type: string): NewEvent => ({ type, data: { at: type }, metadata: { organizationId: 'org-1' } });
const streamOf = (prefix: string) => `${prefix}-${randomUUID()}`;

type Append = (t: TestStore, batch: StreamAppend[]) => Promise<AppendResult[]>;

/** Every way into the append: the pipelined commit, a transaction with exact expectations, one that reads versions first. */
const ENTRY_POINTS: [string, Append][] = [
  ['appendAtOnce', (t, batch) => t.store.appendAtOnce(batch)],
  ['appendMany', (t, batch) => t.store.appendMany(batch)],
  [
    'appendInTransaction, versions read first',
    (t, batch) =>
      t.store.db.transaction().execute((trx) =>
        t.store.appendInTransaction(
          trx,
          batch.map(({ expectedVersion: _exact, ...rest }) => rest),
        ),
      ),
  ],
];

/**
 * `StreamAppend.requires`: an append commits only while other streams are at the versions its
 * caller acted on (the engine running a process at the revision it has cached). Nothing is
 * written to those streams; when one moved, the whole batch fails naming it and nothing of it is
 * on record.
 */
describe.each(DIALECTS)('appends that require other streams at a version, on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
  });
  afterAll(async () => {
    await t.dispose();
  });

  const processAt = async (version: number): Promise<string> => {
    const streamId = streamOf('process');
    for (let at = 0; at < version; at++) await t.store.append(streamId, [event(`Edit${at}`)]);
    return streamId;
  };

  describe.each(ENTRY_POINTS)('%s', (_name, append) => {
    it('commits while the required stream is at its version, and leaves that stream as it was', async () => {
      const process = await processAt(2);
      const run = streamOf('execution');
      const [result] = await append(t, [
        {
          streamId: run,
          events: [event('ExecutionStarted')],
          expectedVersion: 'no_stream',
          requires: [{ streamId: process, version: 2 }],
        },
      ]);
      expect(result!.nextExpectedVersion).toBe(1);
      expect((await t.store.readStream(run)).map((e) => e.type)).toEqual(['ExecutionStarted']);
      expect((await t.store.readStream(process)).map((e) => e.type)).toEqual(['Edit0', 'Edit1']);
    });

    it('fails naming the required stream once it moved, and nothing of the batch is on record', async () => {
      const process = await processAt(1);
      const run = streamOf('execution');
      const other = streamOf('execution');
      await t.store.append(process, [event('Edit1')]);
      const attempt = append(t, [
        { streamId: other, events: [event('ExecutionStarted')], expectedVersion: 'no_stream' },
        {
          streamId: run,
          events: [event('ExecutionStarted'), event('ExecutionCompleted')],
          expectedVersion: 'no_stream',
          requires: [{ streamId: process, version: 1 }],
        },
      ]);
      await expect(attempt).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(attempt).rejects.toMatchObject({ streamId: process, expected: 1, actual: 2 });
      expect(await t.store.readStream(run)).toEqual([]);
      expect(await t.store.readStream(other)).toEqual([]);
      // The connection is usable, and the same append at the new version commits.
      await append(t, [
        {
          streamId: run,
          events: [event('ExecutionStarted')],
          expectedVersion: 'no_stream',
          requires: [{ streamId: process, version: 2 }],
        },
      ]);
      expect(await t.store.readStream(run)).toHaveLength(1);
    });

    it('takes a stream with no events as version 0', async () => {
      const absent = streamOf('process');
      const run = streamOf('execution');
      const requiring = (version: number): StreamAppend[] => [
        {
          streamId: run,
          events: [event('ExecutionStarted')],
          expectedVersion: 'no_stream',
          requires: [{ streamId: absent, version }],
        },
      ];
      await expect(append(t, requiring(1))).rejects.toMatchObject({ streamId: absent, expected: 1, actual: 0 });
      await append(t, requiring(0));
      expect(await t.store.readStream(run)).toHaveLength(1);
    });
  });

  it('checks a requirement under the append lock: an edit committed while the append waits for the lock fails it', async () => {
    if (dialect !== 'postgres') return; // PGlite has one connection: no append can wait behind another.
    const process = await processAt(1);
    const run = streamOf('execution');
    // An edit holds the append lock, uncommitted, while the requiring append is sent.
    let releaseEdit!: () => void;
    const editHolds = new Promise<void>((resolve) => (releaseEdit = resolve));
    let editLocked!: () => void;
    const locked = new Promise<void>((resolve) => (editLocked = resolve));
    const edit = t.store.appendTransaction(async (trx) => {
      await t.store.appendInTransaction(trx, [{ streamId: process, events: [event('Edit1')], expectedVersion: 1 }]);
      editLocked();
      await editHolds;
    });
    await locked;
    const attempt = t.store.appendAtOnce([
      {
        streamId: run,
        events: [event('ExecutionStarted')],
        expectedVersion: 'no_stream',
        requires: [{ streamId: process, version: 1 }],
      },
    ]);
    attempt.catch(() => undefined);
    // The append is blocked behind the lock, not failed or committed.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const waiting = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`.execute(
      t.store.db,
    );
    expect(waiting.rows[0]!.n).toBeGreaterThanOrEqual(1);
    releaseEdit();
    await edit;
    await expect(attempt).rejects.toMatchObject({ streamId: process, expected: 1, actual: 2 });
    expect(await t.store.readStream(run)).toEqual([]);
  });
});
