/**
 * The services the integration tests run against. scripts/run-tests.sh sets every WEFT_TEST_* URL
 * (scripts/ensure-test-services.sh); a missing one fails the test instead of quietly testing less.
 */
export const requiredTestEnv = (name: 'WEFT_TEST_DATABASE_URL' | 'WEFT_TEST_NATS_URL' | 'WEFT_TEST_MYSQL_URL') => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run the tests through scripts/run-tests.sh)`);
  return value;
};

export const testDatabaseUrl = (): string => requiredTestEnv('WEFT_TEST_DATABASE_URL');
export const testNatsUrl = (): string => requiredTestEnv('WEFT_TEST_NATS_URL');

/** WEFT_TEST_MYSQL_URL (mysql://user[:password]@host:port/database) as a mysql connection's data. */
export const testMysqlConnection = () => {
  const url = new URL(requiredTestEnv('WEFT_TEST_MYSQL_URL'));
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
  };
};
