import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, PostgresEventStore } from '../src/index.js';
import { dropSchema, testDatabaseUrl, uniqueName } from './support/test-database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * pg's read timeout (`query_timeout`, which a database URL may set) gives up on a query that the
 * server goes on running. An append that gave up waiting for the append lock left its pooled
 * session waiting; granted later, the session stayed in a transaction holding the lock (its
 * ROLLBACK, queued behind, timed out unsent) and every later append failed until the
 * idle-in-transaction timeout (found by a review). A client whose query timed out so is closed
 * when released: the server rolls back what it had open.
 */
test('after an append gives up on the append lock under pg read timeout, later appends go through', async () => {
  const schema = uniqueName('read_timeout');
  const url = new URL(testDatabaseUrl());
  // The append below gives up after 1 s; its ROLLBACK, queued behind, gives up 1 s later, unsent,
  // while the lock is still held (3 s): the case found. Each holder statement has 0.4 s to spare (a
  // loaded CI machine once ran a 250 ms sleep past a 300 ms timeout).
  url.searchParams.set('query_timeout', '1000');
  url.searchParams.set('application_name', schema);
  const database = await openDatabase({ url: url.toString(), schema, poolSize: 2 });
  const store = await PostgresEventStore.open(database);
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  const event = { type: 'Probed', data: { n: 1 } };
  const outcome = (append: Promise<unknown>) =>
    append.then(
      () => 'ok',
      (error: Error) => error.message,
    );
  try {
    // Holds the append lock about 3 s, each statement within the read timeout.
    const holder = store.appendTransaction(async (trx) => {
      for (let i = 0; i < 5; i++) await sql`SELECT pg_sleep(0.6)`.execute(trx);
      return 'committed';
    });
    await sleep(50);
    expect(await outcome(store.append('gave-up', [event]))).toBe('Query read timeout');
    expect(await holder).toBe('committed');
    await sleep(300);
    const later: string[] = [];
    for (let i = 0; i < 4; i++) {
      later.push(await outcome(store.append(`later-${i}`, [event])));
      await sleep(100);
    }
    expect(later).toEqual(['ok', 'ok', 'ok', 'ok']);
    const { rows } = await admin.query<{ state: string }>(
      `SELECT a.state FROM pg_stat_activity a
        WHERE a.application_name = $1 AND a.state = 'idle in transaction'
          AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)`,
      [schema],
    );
    expect(rows).toEqual([]);
  } finally {
    await admin.end();
    await store.close();
    await database.close();
    await dropSchema(schema);
  }
});
