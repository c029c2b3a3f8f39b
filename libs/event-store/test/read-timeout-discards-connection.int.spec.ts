import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { poolLettingGo } from '../src/adapters/postgres/pool-letting-go.js';
import { testDatabaseUrl, uniqueName } from './support/test-database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * pg's read timeout (`query_timeout`, which a database URL may set) gives up on a query that the
 * server goes on running. A lock wait given up on and granted later left the pooled session in a
 * transaction holding the lock (its ROLLBACK, queued behind, timed out unsent), and every later
 * append waited for that lock until the idle-in-transaction timeout (found by a review). A client
 * whose query timed out so is closed when released: the server rolls back what it had open.
 */
test('a query given up on by pg read timeout closes its connection, so no session is left holding a lock', async () => {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('query_timeout', '300');
  const app = uniqueName('read_timeout');
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1, application_name: app });
  pool.on('error', () => undefined);
  const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: poolLettingGo(pool) }) });
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  const holder = new pg.Client({ connectionString: testDatabaseUrl() });
  await holder.connect();
  const key = Math.floor(Math.random() * 1e9);
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1)', [key]);
    const released = sleep(900).then(() => holder.query('COMMIT'));
    // The shape of the store's appendTransaction: BEGIN and the lock at once, ROLLBACK on failure.
    const outcome = await db
      .connection()
      .execute(async (connection) => {
        try {
          await sql.raw(`BEGIN; SELECT pg_advisory_xact_lock(${key})`).execute(connection);
          return 'locked';
        } catch (error) {
          await sql
            .raw('ROLLBACK')
            .execute(connection)
            .catch(() => undefined);
          throw error;
        }
      })
      .catch((error: Error) => error.message);
    expect(outcome).toBe('Query read timeout');
    await released;
    await sleep(300);
    const { rows } = await admin.query<{ state: string; advisory: number }>(
      `SELECT a.state, (SELECT count(*)::int FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted) AS advisory
         FROM pg_stat_activity a WHERE a.application_name = $1`,
      [app],
    );
    expect(rows.filter((row) => row.state === 'idle in transaction' || row.advisory > 0)).toEqual([]);
    // The pool answers on a new connection, and the lock is free for it.
    const { rows: locked } = await sql<{ got: boolean }>`SELECT pg_try_advisory_lock(${key}) AS got`.execute(db);
    expect(locked).toEqual([{ got: true }]);
    await sql`SELECT pg_advisory_unlock(${key})`.execute(db);
  } finally {
    await holder.end().catch(() => undefined);
    await admin.end();
    await db.destroy();
  }
});
