import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import {
  WrongExpectedVersionError,
  type AppendResult,
  type NewEvent,
  type StoredEvent,
  type StreamAppend,
} from '../src/index.js';
import { appendStatement } from '../src/adapters/postgres/append-statement.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

const event = (type: string, data: unknown = {}): NewEvent => ({ type, data, metadata: { organizationId: 'org-1' } });
const streamOf = () => `execution-${randomUUID()}`;

type Append = (
  t: TestStore,
  batch: StreamAppend[],
  options: { alongside?: (events: readonly StoredEvent[]) => Promise<RawBuilder<unknown>[]> },
) => Promise<AppendResult[]>;

/** Both ways to append with side writes in the same statement: the contract is the same. */
const ENTRY_POINTS: [string, Append][] = [
  [
    'appendInTransaction',
    (t, batch, options) => t.store.db.transaction().execute((trx) => t.store.appendInTransaction(trx, batch, options)),
  ],
  ['appendAtOnce', (t, batch, options) => t.store.appendAtOnce(batch, options)],
];

/**
 * appendInTransaction with exact expectations checks versions inside its insert statement and
 * sends the caller's other writes in that statement; appendAtOnce sends BEGIN, the append lock, the one append statement (with the caller's side
 * writes) and COMMIT to PostgreSQL at once (pipelined): it must keep appendInTransaction's
 * contract, all or nothing, versions checked, positions in commit order, and leave the connection
 * usable after any failure. On PGlite it is appendInTransaction in a transaction.
 */
describe.each(DIALECTS)('appending with side writes on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
    await sql`CREATE TABLE side_rows (id text PRIMARY KEY, n integer NOT NULL CHECK (n >= 0))`.execute(t.store.db);
  });
  afterAll(async () => {
    await t.dispose();
  });

  const sideRow = (id: string, n: number) => sql`INSERT INTO side_rows (id, n) VALUES (${id}, ${n})`;
  const sideRows = async (id: string) =>
    (await sql<{ n: number }>`SELECT n FROM side_rows WHERE id = ${id}`.execute(t.store.db)).rows;

  describe.each(ENTRY_POINTS)('%s', (_name, append) => {
    it('returns events exactly as a read returns them, and commits the side writes with them', async () => {
      const a = streamOf();
      const b = streamOf();
      const seen: string[] = [];
      const results = await append(
        t,
        [
          {
            streamId: a,
            events: [event('ExecutionStarted', { x: [1, { y: "it's \\ \u00e9 $1 -- /*" }] }), event('NodeStarted')],
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
      );
      expect(seen).toEqual([`${a}@1`, `${a}@2`, `${b}@1`, `${a}@3`]);
      expect(results.map((r) => r.nextExpectedVersion)).toEqual([2, 1, 3]);
      const returned = results.flatMap((r) => r.events);
      const read = (await t.store.readAll({ fromPosition: returned[0]!.position - 1 })).filter(
        (e) => e.streamId === a || e.streamId === b,
      );
      expect(returned.map((e) => e.position)).toEqual(read.map((e) => e.position));
      expect(returned).toEqual(read);
      expect(read[0]!.data).toEqual({ x: [1, { y: "it's \\ \u00e9 $1 -- /*" }] });
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
        const attempt = append(
          t,
          [
            { streamId: fresh, events: [event('ExecutionStarted')], expectedVersion: 'no_stream' },
            { streamId, events: [event('ExecutionCancelled')], expectedVersion },
          ],
          { alongside: async () => [sideRow(fresh, 1)] },
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

  it('a side write or an event the database refuses fails the batch with its error, and the next append works', async () => {
    const stream = streamOf();
    const refusedSide = t.store.appendAtOnce(
      [{ streamId: stream, events: [event('A')], expectedVersion: 'no_stream' }],
      {
        alongside: async () => [sideRow(stream, -1)],
      },
    );
    await expect(refusedSide).rejects.toMatchObject({ code: '23514' });
    // jsonb holds no \u0000: the database refuses the event's data.
    const refusedEvent = t.store.appendAtOnce(
      [{ streamId: stream, events: [event('A', { text: 'a\u0000b' })], expectedVersion: 'no_stream' }],
      { alongside: async () => [sideRow(stream, 1)] },
    );
    await expect(refusedEvent).rejects.toMatchObject({ code: expect.stringMatching(/^22/) });
    expect(await t.store.streamVersion(stream)).toBe(0);
    expect(await sideRows(stream)).toEqual([]);
    // A raw NUL in a side write's text: PostgreSQL refuses the parameter.
    const nulSide = t.store.appendAtOnce([{ streamId: stream, events: [event('A')], expectedVersion: 'no_stream' }], {
      alongside: async () => [sql`INSERT INTO side_rows (id, n) VALUES (${`${stream}\u0000x`}, 1)`],
    });
    await expect(nulSide).rejects.toMatchObject({ code: expect.stringMatching(/^22/) });
    expect(await t.store.streamVersion(stream)).toBe(0);
    // Every pooled connection is out of its transaction: appends and reads go on.
    for (let i = 0; i < 12; i++) {
      const other = streamOf();
      await t.store.appendAtOnce([{ streamId: other, events: [event('B')], expectedVersion: 'no_stream' }], {
        alongside: async () => [sideRow(other, i)],
      });
      expect(await sideRows(other)).toEqual([{ n: i }]);
    }
  });

  it('side writes that must read first are made again inside the transaction, reading with it', async () => {
    const stream = streamOf();
    await sql`INSERT INTO side_rows (id, n) VALUES (${`${stream}-source`}, 7)`.execute(t.store.db);
    const readers: boolean[] = [];
    await t.store.appendAtOnce([{ streamId: stream, events: [event('A')], expectedVersion: 'no_stream' }], {
      alongside: async (_events, reader) => {
        readers.push(reader !== undefined);
        if (!reader) return undefined;
        const { rows } = await sql<{ n: number }>`SELECT n FROM side_rows WHERE id = ${`${stream}-source`}`.execute(
          reader,
        );
        return [sideRow(stream, rows[0]!.n + 1)];
      },
    });
    expect(readers).toEqual(dialect === 'postgres' ? [false, true] : [true]);
    expect(await sideRows(stream)).toEqual([{ n: 8 }]);
    expect(await t.store.streamVersion(stream)).toBe(1);
  });

  it('metadata that is not JSON fails the append before anything is sent', async () => {
    const stream = streamOf();
    const attempt = t.store.appendAtOnce(
      [
        {
          streamId: stream,
          events: [{ type: 'A', data: {}, metadata: { toJSON: () => undefined } }],
          expectedVersion: 'no_stream',
        },
      ],
      { alongside: async () => [sideRow(stream, 1)] },
    );
    await expect(attempt).rejects.toThrow(/metadata .* is not JSON/);
    expect(await t.store.streamVersion(stream)).toBe(0);
    expect(await sideRows(stream)).toEqual([]);
  });

  if (dialect === 'postgres') {
    it('the pipelined append statement run without its lock (BEGIN failed) writes nothing', async () => {
      const stream = streamOf();
      const events = (
        await t.store.db
          .transaction()
          .execute(async (trx) => {
            // Only to get events shaped as the store makes them; rolled back.
            const [result] = await t.store.appendInTransaction(trx, [
              { streamId: stream, events: [event('A')], expectedVersion: 'no_stream' },
            ]);
            throw Object.assign(new Error('rollback'), { events: result!.events });
          })
          .catch((error: { events: StoredEvent[] }) => error.events)
      ).map((stored) => ({ ...stored, position: 0 }));
      const alone = appendStatement(events, [{ s: stream, v: 0, x: 'no_stream' }], [sideRow(stream, 1)], {
        lockedBy: 'weft.append_lock',
      });
      await expect(alone.execute(t.store.db)).rejects.toMatchObject({ code: '55000' });
      expect(await t.store.streamVersion(stream)).toBe(0);
      expect(await sideRows(stream)).toEqual([]);
    });

    it('a value pg cannot convert fails the queued transaction before anything is sent', async () => {
      const stream = streamOf();
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const attempt = t.database.queuedTransaction!([
        { sql: 'INSERT INTO side_rows (id, n) VALUES ($1, 1)', parameters: [stream] },
        { sql: 'SELECT $1::text', parameters: [circular] },
      ]);
      await expect(attempt).rejects.toThrow(/circular/i);
      expect(await sideRows(stream)).toEqual([]);
    });

    it('a queued statement without text is refused before anything is sent', async () => {
      const stream = streamOf();
      const attempt = t.database.queuedTransaction!([
        { sql: 'INSERT INTO side_rows (id, n) VALUES ($1, 1)', parameters: [stream] },
        { sql: '  ', parameters: [] },
      ]);
      await expect(attempt).rejects.toThrow('a queued statement has no text');
      expect(await sideRows(stream)).toEqual([]);
    });

    it('the queued statements are one transaction: a later one failing rolls back the earlier ones', async () => {
      const stream = streamOf();
      const attempt = t.database.queuedTransaction!([
        { sql: 'INSERT INTO side_rows (id, n) VALUES ($1, 1)', parameters: [stream] },
        { sql: "SELECT set_config('weft.test_setting', 'seen', true)", parameters: [] },
        // Sees what the statements before it did in this transaction; then fails.
        {
          sql: "SELECT 1 / (count(*) - 1) FROM side_rows WHERE id = $1 AND current_setting('weft.test_setting') = 'seen'",
          parameters: [stream],
        },
      ]);
      await expect(attempt).rejects.toMatchObject({ code: '22012' }); // division by zero: the row was there
      expect(await sideRows(stream)).toEqual([]);
      // Each statement's rows come back, in order, once all of them committed.
      const [inserted, count] = await t.database.queuedTransaction!([
        { sql: 'INSERT INTO side_rows (id, n) VALUES ($1, 2) RETURNING n', parameters: [stream] },
        { sql: 'SELECT count(*)::int AS c FROM side_rows WHERE id = $1', parameters: [stream] },
      ]);
      expect([inserted, count]).toEqual([[{ n: 2 }], [{ c: 1 }]]);
      expect(await sideRows(stream)).toEqual([{ n: 2 }]);
    });

    it('a prepared queued statement is parsed once per connection, also after failures, and gives the same answers', async () => {
      const text = 'INSERT INTO side_rows (id, n) VALUES ($1, $2) RETURNING n';
      const prepared = (id: string, n: number) => ({ sql: text, parameters: [id, n], prepared: true });
      // On each connection of the pipelined pool: what PostgreSQL keeps prepared with this text.
      const preparedHere = {
        sql: 'SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1',
        parameters: [text],
      };
      const ids = Array.from({ length: 30 }, streamOf);
      const answers = await Promise.all(
        ids.map((id, n) => t.database.queuedTransaction!([prepared(id, n), preparedHere])),
      );
      expect(answers.map(([rows]) => rows)).toEqual(ids.map((_, n) => [{ n }]));
      expect(answers.every(([, kept]) => (kept as { n: number }[])[0]!.n === 1)).toBe(true);
      // A failing run of it (the CHECK refuses -1) rolls back and leaves it usable.
      const refused = streamOf();
      await expect(t.database.queuedTransaction!([prepared(refused, -1)])).rejects.toMatchObject({ code: '23514' });
      const again = streamOf();
      const [rows] = await t.database.queuedTransaction!([prepared(again, 7)]);
      expect(rows).toEqual([{ n: 7 }]);
      expect(await sideRows(refused)).toEqual([]);
      expect(await sideRows(again)).toEqual([{ n: 7 }]);
    });

    it('a column type change under a prepared append (a migration) costs a new connection, not a failed append', async () => {
      // A store of its own: its events table is altered.
      const own = await openTestStore('postgres');
      const appendOne = () =>
        own.store.appendAtOnce([{ streamId: streamOf(), expectedVersion: 'no_stream', events: [event('A')] }]);
      try {
        // Enough appends on both pipelined connections for PostgreSQL to keep a plan of its own.
        await Promise.all(Array.from({ length: 12 }, appendOne));
        await sql
          .raw(`ALTER TABLE ${own.database.schema}.events ALTER COLUMN stream_id TYPE varchar(200)`)
          .execute(own.store.db);
        for (let i = 0; i < 4; i++) {
          const [result] = await appendOne();
          expect(result!.events).toHaveLength(1);
        }
      } finally {
        await own.dispose();
      }
    });

    it('a batch of more than 32 MiB of JSON is read as json (a jsonb value holds at most 255 MB) and stored whole', async () => {
      // Two events of 17 MiB: more text than jsonRecordsetFor reads as jsonb. (Over 255 MB, a
      // jsonb parameter fails with SQLSTATE 54000: too slow to show here, 20 s and more.)
      const big = (mark: string) => ({ text: mark.repeat(17 * 1024 * 1024) });
      const streams = [streamOf(), streamOf()];
      const results = await t.store.appendAtOnce(
        streams.map((streamId, index) => ({
          streamId,
          expectedVersion: 'no_stream' as const,
          events: [event('Big', big(String(index)))],
        })),
        { alongside: async () => [sideRow(streams[0]!, 1)] },
      );
      expect(results.map((result) => result.events.length)).toEqual([1, 1]);
      const [stored] = await t.store.readStream(streams[1]!);
      expect((stored!.data as { text: string }).text).toBe(big('1').text);
      expect(await sideRows(streams[0]!)).toEqual([{ n: 1 }]);
    }, 60_000);
  }

  it('concurrent batches get positions in commit order: a reader never skips one', async () => {
    const streams = Array.from({ length: 40 }, streamOf);
    const from = await t.store.headPosition();
    const seen: number[] = [];
    let reading = true;
    // A reader that only moves forward: a position committed after a higher one would be skipped.
    const reader = (async () => {
      let after = from;
      while (reading) {
        const events = await t.store.readAll({ fromPosition: after });
        for (const stored of events) seen.push(stored.position);
        after = events.at(-1)?.position ?? after;
      }
    })();
    await Promise.all(
      streams.map((streamId, index) =>
        t.store.appendAtOnce([
          { streamId, events: [event('A', { index }), event('B', { index })], expectedVersion: 'no_stream' },
        ]),
      ),
    );
    reading = false;
    await reader;
    const tail = await t.store.readAll({ fromPosition: seen.at(-1) ?? from });
    seen.push(...tail.map((stored) => stored.position));
    const all = (await t.store.readAll({ fromPosition: from })).map((stored) => stored.position);
    expect(all).toHaveLength(80);
    expect(seen).toEqual(all);
  });
});
