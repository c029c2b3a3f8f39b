import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../src/index.js';

// Guards the PGlite dialect choice (TOOLCHAIN.md): kysely-pglite interleaved transactions on
// PGlite's single session, and a rollback of one lost the other's committed row.
describe('PGlite transactions', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    await sql`CREATE TABLE items (name text PRIMARY KEY)`.execute(database.db);
  });
  afterAll(async () => {
    await database.close();
  });

  it('keeps the committed row when a concurrent transaction rolls back', async () => {
    let firstInserted!: () => void;
    const inserted = new Promise<void>((resolve) => (firstInserted = resolve));
    const committed = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ name: 'kept' }).execute();
      firstInserted();
      // Holds the transaction open while the second one starts: an unserialized driver would run
      // the second's INSERT and ROLLBACK inside this transaction now.
      await new Promise((resolve) => setTimeout(resolve, 100));
    });
    await inserted;
    const rolledBack = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ name: 'discarded' }).execute();
      throw new Error('roll me back');
    });
    await committed;
    await expect(rolledBack).rejects.toThrow('roll me back');
    const rows = await database.db.selectFrom('items').select('name').execute();
    expect(rows).toEqual([{ name: 'kept' }]);
  });

  it('persists to a data directory and isolates a schema', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'weft-pglite-'));
    try {
      const first = await openDatabase({ dataDir, schema: 'weft_app' });
      await sql`CREATE TABLE notes (body text)`.execute(first.db);
      await first.db.insertInto('notes').values({ body: 'survives' }).execute();
      await first.close();
      const second = await openDatabase({ dataDir, schema: 'weft_app' });
      expect(await second.db.selectFrom('notes').select('body').execute()).toEqual([{ body: 'survives' }]);
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(second.db);
      expect(rows[0]!.schema).toBe('weft_app');
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    // Two initdb-and-open runs of PGlite on disk: seconds each, far more on a loaded 2-core machine.
  }, 180_000);
});
