import pg from 'pg';
import { inlineParameters } from '../src/adapters/postgres/inline-parameters.js';
import { testDatabaseUrl } from './support/test-database.js';

/**
 * A statement whose values are written into its text must mean what it means with parameters:
 * each value is compared as PostgreSQL reads it both ways, on a real server.
 */
describe('inlineParameters', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
  });

  const values: unknown[] = [
    "it's",
    "back\\slash \\' \\n",
    "''; DROP TABLE x; --",
    '$1 $$ $tag$ /* -- */',
    'é ü 漢字 😀',
    JSON.stringify({ a: 'quote " and \\ and \n', b: [1, null] }),
    42,
    -7.5,
    0,
    true,
    false,
    null,
    undefined,
    new Date('2026-11-27T15:04:05.678Z'),
    ['a', "b'c", 'd\\e', null],
    [1, 2, 3],
    { nested: "o'k" },
    12345678901234567890n,
  ];

  it('reads every value as a parameter of the same statement reads it', async () => {
    const text = `SELECT ${values.map((_, i) => `$${i + 1}::text AS v${i}`).join(', ')}`;
    const inlined = inlineParameters(text, values);
    expect(inlined).toBeDefined();
    expect(inlined).not.toContain('$1::');
    const withParameters = await client.query(text, values);
    const written = await client.query(inlined!);
    expect(written.rows).toEqual(withParameters.rows);
  });

  it('keeps $n inside quoted text, quoted names, dollar quotes and comments as it is', () => {
    const text = `SELECT '$1' AS "$2", $tag$ $1 $tag$, $$ $2 $$ -- $1\n, /* $2 */ $1, $2`;
    expect(inlineParameters(text, ['x', 'y'])).toBe(
      `SELECT '$1' AS "$2", $tag$ $1 $tag$, $$ $2 $$ -- $1\n, /* $2 */ E'x', E'y'`,
    );
  });

  it('replaces $10 as itself, not as $1 followed by 0', () => {
    const ten = Array.from({ length: 10 }, (_, i) => String(i + 1));
    expect(inlineParameters('SELECT $10, $1', ten)).toBe("SELECT E'10', E'1'");
  });

  it('gives up on what one message cannot carry: NUL in text, binary values', () => {
    expect(inlineParameters('SELECT $1', ['a\u0000b'])).toBeUndefined();
    expect(inlineParameters('SELECT $1', [Buffer.from('ab')])).toBeUndefined();
  });
});
