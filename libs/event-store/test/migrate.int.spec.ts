import { sql } from 'kysely';
import { migrate, openDatabase, PostgresEventStore, type Migration } from '../src/index.js';
import { DIALECTS, openTestStore, testDatabaseUrl, type TestStore } from './support/test-database.js';

describe.each(DIALECTS)('migrate on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
  });
  afterAll(async () => {
    await t.dispose();
  });

  const first: Migration = {
    name: '0001-widgets',
    up: async (db) => void (await sql`CREATE TABLE widgets (id int PRIMARY KEY)`.execute(db)),
  };
  const second: Migration = {
    name: '0002-widgets-name',
    up: async (db) => void (await sql`ALTER TABLE widgets ADD COLUMN name text`.execute(db)),
  };

  it('applies only what is new, in order, and is idempotent', async () => {
    expect(await migrate(t.store.db, [first], 'widget_migrations')).toEqual(['0001-widgets']);
    expect(await migrate(t.store.db, [first], 'widget_migrations')).toEqual([]);
    expect(await migrate(t.store.db, [first, second], 'widget_migrations')).toEqual(['0002-widgets-name']);
    await t.store.db.insertInto('widgets').values({ id: 1, name: 'w' }).execute();
    expect(await t.store.db.selectFrom('widgets').selectAll().execute()).toEqual([{ id: 1, name: 'w' }]);
  });

  it('rolls back a failing migration entirely', async () => {
    const broken: Migration = {
      name: '0001-broken',
      up: async (db) => {
        await sql`CREATE TABLE half_done (id int)`.execute(db);
        await sql`SELECT * FROM no_such_table`.execute(db);
      },
    };
    await expect(migrate(t.store.db, [broken], 'broken_migrations')).rejects.toThrow();
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'half_done'`.execute(t.store.db);
    expect(rows[0]!.n).toBe(0);
  });

  it('the event store migrations ran once and opening the store again is a no-op', async () => {
    const migrations = () =>
      sql<{
        name: string;
        applied_at: Date;
      }>`SELECT name, applied_at FROM event_store_migrations ORDER BY name`.execute(t.store.db);
    const before = (await migrations()).rows;
    expect(before.map((r) => r.name)).toEqual(['0001-events', '0002-checkpoints', '0003-append-checks']);
    const streamId = `widget-${crypto.randomUUID()}`;
    await t.store.append(streamId, [{ type: 'WidgetMade', data: { n: 1 } }]);

    // Open the store again on the same tables: PostgreSQL through a new connection pool, PGlite on its one database.
    const database =
      dialect === 'postgres' ? await openDatabase({ url: testDatabaseUrl(), schema: t.database.schema }) : t.database;
    const reopened = await PostgresEventStore.open(database);
    try {
      expect((await migrations()).rows).toEqual(before);
      expect((await reopened.readStream(streamId)).map((e) => [e.type, e.data])).toEqual([['WidgetMade', { n: 1 }]]);
    } finally {
      if (database !== t.database) {
        await reopened.close();
        await database.close();
      }
    }
  });
});
