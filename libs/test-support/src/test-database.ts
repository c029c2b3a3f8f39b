import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

const testServerUrl = (): string => {
  const url = process.env.WEFT_TEST_DATABASE_URL;
  if (!url) throw new Error('WEFT_TEST_DATABASE_URL is not set (run through scripts/run-tests.sh)');
  return url;
};

async function asAdmin(adminUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh database named `${prefix}_<unique>` on the server of `adminUrl` (default: the test
 * PostgreSQL server, WEFT_TEST_DATABASE_URL).
 */
export async function createTestDatabase(prefix: string, adminUrl = testServerUrl()): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await asAdmin(adminUrl, `CREATE DATABASE ${name}`);
  return {
    url: adminUrl.replace(/\/[^/]*$/, `/${name}`),
    drop: () => asAdmin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}
