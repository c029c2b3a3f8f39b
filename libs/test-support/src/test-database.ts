import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

const adminUrl = (): string => {
  const url = process.env.WEFT_TEST_DATABASE_URL;
  if (!url) throw new Error('WEFT_TEST_DATABASE_URL is not set (run through scripts/run-tests.sh)');
  return url;
};

async function asAdmin(statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** A fresh database on the test PostgreSQL server (WEFT_TEST_DATABASE_URL), named `${prefix}_<unique>`. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await asAdmin(`CREATE DATABASE ${name}`);
  return {
    url: adminUrl().replace(/\/[^/]*$/, `/${name}`),
    drop: () => asAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
