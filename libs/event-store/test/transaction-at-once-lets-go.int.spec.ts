import pg from 'pg';
import { TransactionAtOnce } from '../src/adapters/postgres/transaction-at-once.js';
import { testDatabaseUrl } from './support/test-database.js';

/** What the transaction still holds once answered (see `QueryLettingGo`). */
const heldBy = (transaction: TransactionAtOnce) => {
  const fields = transaction as unknown as Record<string, unknown>;
  return {
    statements: (fields.statements as unknown[]).length,
    text: fields.text,
    values: fields.values,
    settle: fields.settle,
  };
};
const cleared = { statements: 0, text: '', values: undefined, settle: undefined };
const functionsOf = (transaction: TransactionAtOnce) => {
  const fields = transaction as unknown as { callback: unknown; submit: unknown };
  return { callback: fields.callback, submit: fields.submit };
};

/** A client whose every query has pg's read timeout (`query_timeout` in the URL, as a deployment may set it). */
async function clientWithReadTimeout(ms: number): Promise<pg.Client> {
  const url = new URL(testDatabaseUrl());
  url.searchParams.set('query_timeout', String(ms));
  const client = new pg.Client({ connectionString: url.toString() });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * pg keeps the callback it called reachable for young-generation collections until the next full
 * one; a transaction that still held its statements or its promise once answered, or whose
 * callback or submit was a closure over it, had them promoted to the old generation on every
 * commit. Once answered it holds none of them, its functions are shared by every transaction, and
 * it settles the same way whatever pg reports (rows, a server error, pg's own read timeout).
 */
describe('a transaction sent at once lets go of what it sent once answered', () => {
  const pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 1 });
  let client: pg.PoolClient;
  beforeAll(async () => {
    client = await pool.connect();
  });
  afterAll(async () => {
    client.release();
    await pool.end();
  });

  test('after rows come back', async () => {
    const first = new TransactionAtOnce([
      { text: 'SELECT $1::text AS sent', values: ['x'.repeat(10_000)] },
      { text: 'SELECT 2 AS n', values: [] },
    ]);
    const second = new TransactionAtOnce([{ text: 'SELECT 3 AS n', values: [] }]);
    const rows = await first.results(client);
    expect(rows).toEqual([[{ sent: 'x'.repeat(10_000) }], [{ n: 2 }]]);
    expect(await second.results(client)).toEqual([[{ n: 3 }]]);
    expect(heldBy(first)).toEqual(cleared);
    expect(typeof functionsOf(first).callback).toBe('function');
    expect(functionsOf(second)).toEqual(functionsOf(first));
  });

  test('after a statement fails, which still rejects and rolls back the others', async () => {
    await client.query('CREATE TEMP TABLE IF NOT EXISTS lets_go (n int)');
    const failing = new TransactionAtOnce([
      { text: 'INSERT INTO lets_go VALUES (1)', values: [] },
      { text: 'SELECT 1 / $1::int AS n', values: ['0'] },
    ]);
    await expect(failing.results(client)).rejects.toThrow('division by zero');
    expect(heldBy(failing)).toEqual(cleared);
    expect((await client.query('SELECT count(*)::int AS n FROM lets_go')).rows).toEqual([{ n: 0 }]);
    // The connection answers the next transaction.
    expect(await new TransactionAtOnce([{ text: 'SELECT 4 AS n', values: [] }]).results(client)).toEqual([[{ n: 4 }]]);
  });

  test("with pg's read timeout configured, an answer in time settles and lets go", async () => {
    const timed = await clientWithReadTimeout(5_000);
    try {
      const transaction = new TransactionAtOnce([
        { text: 'SELECT 1 AS n', values: [] },
        { text: 'SELECT $1::text AS t', values: ['x'] },
      ]);
      expect(await transaction.results(timed)).toEqual([[{ n: 1 }], [{ t: 'x' }]]);
      expect(heldBy(transaction)).toEqual(cleared);
    } finally {
      await timed.end();
    }
  });

  test("pg's read timeout rejects a slow transaction and the connection goes on answering", async () => {
    const timed = await clientWithReadTimeout(300);
    try {
      const slow = new TransactionAtOnce([
        { text: 'SELECT pg_sleep(0.6)', values: [] },
        { text: 'SELECT 1 AS n', values: [] },
      ]);
      await expect(slow.results(timed)).rejects.toThrow('Query read timeout');
      expect(heldBy(slow)).toEqual(cleared);
      // The rest of the slow exchange still arrives and lands in the timed-out query.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await new TransactionAtOnce([{ text: 'SELECT 2 AS n', values: [] }]).results(timed)).toEqual([[{ n: 2 }]]);
      await expect(new TransactionAtOnce([{ text: 'SELECT 1 / 0', values: [] }]).results(timed)).rejects.toThrow(
        'division by zero',
      );
    } finally {
      await timed.end();
    }
  });
});
