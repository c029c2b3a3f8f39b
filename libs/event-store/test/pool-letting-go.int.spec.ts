import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { KyselyQuery, poolLettingGo } from '../src/adapters/postgres/pool-letting-go.js';
import { testDatabaseUrl, uniqueName } from './support/test-database.js';

/** What pg could still reach on a query after its answer (see `KyselyQuery`). */
const heldBy = (query: KyselyQuery) => {
  const fields = query as unknown as Record<string, unknown>;
  return { text: fields.text, values: fields.values, settle: fields.settle };
};
const cleared = { text: '', values: undefined, settle: undefined };

/**
 * pg's promise API answers through a closure over the query, which pg keeps reachable for young
 * collections after calling it: every kysely query's text, parameters and rows were promoted to
 * the old generation. Kysely's queries now go through `KyselyQuery`, which answers the same.
 */
describe('queries that let go of what they sent once answered', () => {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 2 });
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: poolLettingGo(pool) }) });
  afterAll(() => db.destroy());

  test('a query answers its rows and then holds nothing; every query shares one callback', async () => {
    const client = await pool.connect();
    try {
      const first = new KyselyQuery('SELECT $1::text AS sent, 2 AS n', ['x'.repeat(10_000)]);
      const second = new KyselyQuery('SELECT 3 AS n', []);
      const result = await first.answer(client);
      expect(result.rows).toEqual([{ sent: 'x'.repeat(10_000), n: 2 }]);
      expect((await second.answer(client)).rows).toEqual([{ n: 3 }]);
      expect(heldBy(first)).toEqual(cleared);
      const callbackOf = (query: KyselyQuery) => (query as unknown as { callback: unknown }).callback;
      expect(callbackOf(second)).toBe(callbackOf(first));
    } finally {
      client.release();
    }
  });

  test('a failing query rejects with the database error and holds nothing', async () => {
    const client = await pool.connect();
    try {
      const failing = new KyselyQuery('SELECT 1 / $1::int AS n', ['0']);
      await expect(failing.answer(client)).rejects.toMatchObject({ code: '22012' });
      expect(heldBy(failing)).toEqual(cleared);
      expect((await new KyselyQuery('SELECT 4 AS n', []).answer(client)).rows).toEqual([{ n: 4 }]);
    } finally {
      client.release();
    }
  });

  test("kysely over it with pg's read timeout configured: in time it answers, too slow it rejects", async () => {
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('query_timeout', '300');
    const timed = new Kysely<Record<string, never>>({
      dialect: new PostgresDialect({ pool: poolLettingGo(new pg.Pool({ connectionString: url.toString(), max: 1 })) }),
    });
    try {
      expect((await sql<{ n: number }>`SELECT 1 AS n`.execute(timed)).rows).toEqual([{ n: 1 }]);
      await expect(sql`SELECT pg_sleep(0.6)`.execute(timed)).rejects.toThrow('Query read timeout');
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await sql<{ n: number }>`SELECT 2 AS n`.execute(timed)).rows).toEqual([{ n: 2 }]);
    } finally {
      await timed.destroy();
    }
  });

  test('kysely over it: rows, command counts, transactions committed and rolled back', async () => {
    const table = sql.table(uniqueName('pool_letting_go'));
    await sql`CREATE TABLE ${table} (n int)`.execute(db);
    const inserted = await sql`INSERT INTO ${table} VALUES (1), (2)`.execute(db);
    expect(inserted.numAffectedRows).toBe(2n);
    await db.transaction().execute(async (trx) => {
      await sql`INSERT INTO ${table} VALUES (3)`.execute(trx);
    });
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`INSERT INTO ${table} VALUES (4)`.execute(trx);
        await sql`SELECT 1 / 0`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: '22012' });
    const { rows } = await sql<{ n: number }>`SELECT n FROM ${table} ORDER BY n`.execute(db);
    expect(rows.map((row) => row.n)).toEqual([1, 2, 3]);
    await sql`DROP TABLE ${table}`.execute(db);
  });
});
