import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { openDatabase, PostgresEventStore, type Database, type DatabaseDialect } from '../../src/index.js';

/** Both engines the store runs on; every store test runs against each. */
export const DIALECTS: readonly DatabaseDialect[] = ['pglite', 'postgres'];

export const testDatabaseUrl = (): string => {
  const url = process.env.WEFT_TEST_DATABASE_URL;
  if (!url) throw new Error('WEFT_TEST_DATABASE_URL is not set (run through scripts/run-tests.sh)');
  return url;
};

export const uniqueName = (prefix: string): string => `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

export interface TestStore {
  database: Database;
  store: PostgresEventStore;
  /** Closes the store and database and drops the test's own schema. */
  dispose(): Promise<void>;
}

/** A fresh store: PGlite in memory, or a PostgreSQL schema no other test uses. */
export async function openTestStore(dialect: DatabaseDialect, schema = uniqueName('es_test')): Promise<TestStore> {
  const database =
    dialect === 'postgres'
      ? await openDatabase({ url: testDatabaseUrl(), schema })
      : await openDatabase({ dataDir: 'memory://', schema });
  const store = await PostgresEventStore.open(database);
  return {
    database,
    store,
    async dispose() {
      await store.close();
      await database.close();
      if (dialect === 'postgres') await dropSchema(schema);
    },
  };
}

/** Drops a schema this test created (never a shared one). */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
