import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { WrongExpectedVersionError, type NewEvent } from '../src/index.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

const event = (type: string, data: unknown = {}): NewEvent => ({ type, data, metadata: { organizationId: 'org-1' } });
const streamOf = () => `execution-${randomUUID()}`;

/**
 * appendInTransaction with exact expectations checks versions inside its insert statement and
 * sends the caller's other writes in that statement: both must keep the all-or-nothing contract.
 */
describe.each(DIALECTS)('appendInTransaction on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
    await sql`CREATE TABLE side_rows (id text PRIMARY KEY, n integer NOT NULL)`.execute(t.store.db);
  });
  afterAll(async () => {
    await t.dispose();
  });

  const sideRow = (id: string, n: number) => sql`INSERT INTO side_rows (id, n) VALUES (${id}, ${n})`;
  const sideRows = async (id: string) =>
    (await sql<{ n: number }>`SELECT n FROM side_rows WHERE id = ${id}`.execute(t.store.db)).rows;

  it('returns events exactly as a read returns them, and commits the side writes with them', async () => {
    const a = streamOf();
    const b = streamOf();
    const seen: string[] = [];
    const results = await t.store.db.transaction().execute((trx) =>
      t.store.appendInTransaction(
        trx,
        [
          {
            streamId: a,
            events: [event('ExecutionStarted', { x: [1, { y: 'z' }] }), event('NodeStarted')],
            expectedVersion: 'no_stream',
          },
          { streamId: b, events: [event('ExecutionStarted', null)], expectedVersion: 'no_stream' },
          { streamId: a, events: [event('NodeCompleted', { ok: true })], expectedVersion: 2 },
        ],
        {
          alongside: async (events) => {
            seen.push(...events.map((e) => `${e.streamId}@${e.streamVersion}`));
            return [sideRow(a, events.length)];
          },
        },
      ),
    );
    expect(seen).toEqual([`${a}@1`, `${a}@2`, `${b}@1`, `${a}@3`]);
    expect(results.map((r) => r.nextExpectedVersion)).toEqual([2, 1, 3]);
    const returned = results.flatMap((r) => r.events);
    const read = (await t.store.readAll({ fromPosition: returned[0]!.position - 1 })).filter(
      (e) => e.streamId === a || e.streamId === b,
    );
    expect(returned.map((e) => e.position)).toEqual(read.map((e) => e.position));
    expect(returned).toEqual(read);
    expect(await sideRows(a)).toEqual([{ n: 4 }]);
  });

  it('a stream behind or ahead of the expected version fails the batch, side writes included', async () => {
    const behind = streamOf();
    const ahead = streamOf();
    const fresh = streamOf();
    await t.store.append(behind, [event('ExecutionStarted')]);
    await t.store.append(ahead, [event('ExecutionStarted'), event('NodeStarted'), event('NodeCompleted')]);
    for (const [streamId, expectedVersion, actual] of [
      [behind, 2, 1],
      [ahead, 2, 3],
      [ahead, 'no_stream', 3],
    ] as const) {
      const attempt = t.store.db.transaction().execute((trx) =>
        t.store.appendInTransaction(
          trx,
          [
            { streamId: fresh, events: [event('ExecutionStarted')], expectedVersion: 'no_stream' },
            { streamId, events: [event('ExecutionCancelled')], expectedVersion },
          ],
          { alongside: async () => [sideRow(fresh, 1)] },
        ),
      );
      await expect(attempt).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await expect(attempt).rejects.toMatchObject({ streamId, expected: expectedVersion, actual });
    }
    expect(await t.store.streamVersion(fresh)).toBe(0);
    expect(await t.store.streamVersion(behind)).toBe(1);
    expect(await t.store.streamVersion(ahead)).toBe(3);
    expect(await sideRows(fresh)).toEqual([]);
  });
});
