import pg from 'pg';
import { TransactionAtOnce } from '../src/adapters/postgres/transaction-at-once.js';
import { testDatabaseUrl } from './support/test-database.js';

/** What pg and Node could still reach on a TransactionAtOnce after its answer (see `handleAnswer`). */
const heldBy = (transaction: TransactionAtOnce) => {
  const fields = transaction as unknown as {
    statements: unknown[];
    text: string;
    values: unknown;
    _result: unknown;
    _results: unknown;
    settle: unknown;
    callback: unknown;
  };
  return {
    statements: fields.statements.length,
    text: fields.text,
    values: fields.values,
    result: fields._result,
    results: fields._results,
    settle: fields.settle,
    callback: fields.callback,
  };
};

/**
 * pg keeps the callback it called reachable for young-generation collections until the next full
 * one; a transaction that still held its statements, pg's results or its promise once answered
 * had them promoted to the old generation on every commit. Once answered it holds none of them,
 * and its callback is one function shared by every transaction, not a closure over it.
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

  const cleared = {
    statements: 0,
    text: '',
    values: undefined,
    result: undefined,
    results: undefined,
    settle: undefined,
  };

  test('after rows come back', async () => {
    const first = new TransactionAtOnce([
      { text: 'SELECT $1::text AS sent', values: ['x'.repeat(10_000)] },
      { text: 'SELECT 2 AS n', values: [] },
    ]);
    const second = new TransactionAtOnce([{ text: 'SELECT 3 AS n', values: [] }]);
    const rows = await first.results(client);
    expect(rows).toEqual([[{ sent: 'x'.repeat(10_000) }], [{ n: 2 }]]);
    expect(await second.results(client)).toEqual([[{ n: 3 }]]);
    const [held, heldBySecond] = [heldBy(first), heldBy(second)];
    expect(held).toMatchObject(cleared);
    expect(typeof held.callback).toBe('function');
    expect(heldBySecond.callback).toBe(held.callback);
  });

  test('after a statement fails, which still rejects and rolls back the others', async () => {
    await client.query('CREATE TEMP TABLE IF NOT EXISTS lets_go (n int)');
    const failing = new TransactionAtOnce([
      { text: 'INSERT INTO lets_go VALUES (1)', values: [] },
      { text: 'SELECT 1 / $1::int AS n', values: ['0'] },
    ]);
    await expect(failing.results(client)).rejects.toThrow('division by zero');
    expect(heldBy(failing)).toMatchObject(cleared);
    expect((await client.query('SELECT count(*)::int AS n FROM lets_go')).rows).toEqual([{ n: 0 }]);
    // The connection answers the next transaction.
    expect(await new TransactionAtOnce([{ text: 'SELECT 4 AS n', values: [] }]).results(client)).toEqual([[{ n: 4 }]]);
  });
});
