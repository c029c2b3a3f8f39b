import type { DecryptedConnection } from '@weft/contracts';
import type { ResolvedAddress } from '../src/adapters/http/protected-endpoint.js';
import { createNodePalette, type NodePalette } from '../src/adapters/nodes/node-palette.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { runInMemory } from './support/run-in-memory.js';
import { testDatabaseUrl, testMysqlConnection } from './support/test-services.js';

/**
 * SQL and database nodes against the outbound guard: the real PostgreSQL at 127.0.0.1:5432 plays
 * the service's own database (WEFT_DATABASE_URL) and MariaDB at 127.0.0.1:3306 a tenant's.
 */
const serviceDatabaseUrl = testDatabaseUrl();
const mariadb = testMysqlConnection();

const postgres = (data: Record<string, unknown>): DecryptedConnection => ({
  id: `pg-${crypto.randomUUID()}`,
  organizationId: 'org',
  type: 'postgres',
  name: 'pg',
  data,
});
const mysql = (data: Record<string, unknown>): DecryptedConnection => ({
  id: `my-${crypto.randomUUID()}`,
  organizationId: 'org',
  type: 'mysql',
  name: 'mysql',
  data,
});

async function runNode(
  palette: NodePalette,
  type: string,
  config: Record<string, unknown>,
  connection?: DecryptedConnection,
) {
  const g = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Db', type, { ...(connection ? { connectionId: connection.id } : {}), ...config })
    .edge('In', 'Db');
  return runInMemory(
    g.snapshot(),
    g.id('In'),
    {},
    {
      executors: palette.executors,
      connections: connection ? { [connection.id]: connection } : {},
    },
  );
}

describe("the service's own database is never a tenant's target", () => {
  const palette = createNodePalette({ serviceDatabaseUrl });
  afterAll(() => palette.close());

  test.each([
    ['the same URL', { url: serviceDatabaseUrl }],
    ['another database on the same server, by name', { url: 'postgres://postgres@localhost:5432/postgres' }],
    ['another loopback address', { url: 'postgres://postgres@127.0.0.2:5432/weft_test' }],
    ['IPv6 loopback', { url: 'postgres://postgres@[::1]:5432/weft_test' }],
    ['IPv4-mapped loopback', { url: 'postgres://postgres@[::ffff:127.0.0.1]:5432/weft_test' }],
    ['the unspecified address', { url: 'postgres://postgres@0.0.0.0:5432/weft_test' }],
    ['host and port fields', { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'weft_test' }],
  ])('a postgres connection to %s is refused', async (_name, data) => {
    const { outcome } = await runNode(palette, 'sqlNode', { query: 'select 1 as one' }, postgres(data));
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining("the service's own database") });
  });

  test('a database node cannot insert into it either', async () => {
    const { outcome } = await runNode(
      palette,
      'databaseNode',
      { table: 'api_keys', operation: 'insert', values: { id: 'x' } },
      postgres({ url: serviceDatabaseUrl }),
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining("the service's own database") });
  });

  test('neither can a mysql connection or an HTTP request to its port', async () => {
    const viaMysql = await runNode(palette, 'sqlNode', { query: 'select 1' }, mysql({ ...mariadb, port: 5432 }));
    expect(viaMysql.outcome).toMatchObject({
      status: 'failed',
      error: expect.stringContaining("the service's own database"),
    });
    const viaHttp = await runNode(palette, 'integrationNode', { url: 'http://localhost:5432/', retries: 0 });
    expect(viaHttp.outcome).toMatchObject({
      status: 'failed',
      error: expect.stringContaining("the service's own database"),
    });
  });

  test('other private databases stay reachable without WEFT_OUTBOUND_BLOCK_PRIVATE', async () => {
    const { outcome, listener } = await runNode(palette, 'sqlNode', { query: 'select 1 as one' }, mysql(mariadb));
    expect(outcome.status).toBe('completed');
    expect(listener.output('Db')).toMatchObject({ rows: [{ one: 1 }] });
  });
});

describe('connection options that read local files or sockets are refused', () => {
  const palette = createNodePalette();
  afterAll(() => palette.close());

  test.each([
    [
      'sslrootcert',
      postgres({ url: 'postgres://postgres@127.0.0.1:5432/weft_test?sslmode=verify-full&sslrootcert=/etc/passwd' }),
    ],
    ['sslcert', postgres({ url: 'postgres://postgres@127.0.0.1:5432/weft_test?sslcert=/etc/passwd' })],
    ['sslkey', postgres({ url: 'postgres://postgres@127.0.0.1:5432/weft_test?sslkey=/etc/shadow' })],
    ['host=/socket', postgres({ url: 'postgres://postgres@/weft_test?host=/var/run/postgresql' })],
    ['an encoded socket path', postgres({ url: 'postgres://postgres@%2Fvar%2Frun%2Fpostgresql/weft_test' })],
    ['a socket path field', postgres({ host: '/var/run/postgresql', user: 'postgres' })],
    ['several hosts', postgres({ url: 'postgres://postgres@example.invalid:5432,127.0.0.1:5432/weft_test' })],
    ['socketPath', mysql({ url: 'mysql://root@127.0.0.1:3306/test?socketPath=/run/mysqld/mysqld.sock' })],
    ['a socketPath field', mysql({ ...mariadb, socketPath: '/run/mysqld/mysqld.sock' })],
    ['infileStreamFactory', mysql({ url: 'mysql://root@127.0.0.1:3306/test?infileStreamFactory=1' })],
    ['flags', mysql({ url: 'mysql://root@127.0.0.1:3306/test?flags=LOCAL_FILES' })],
  ])('%s', async (_name, connection) => {
    const { outcome } = await runNode(palette, 'sqlNode', { query: 'select 1' }, connection);
    expect(outcome).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/refused|single host|not a valid URL/),
    });
  });

  test('the MariaDB server cannot make the engine send a local file (LOAD DATA LOCAL INFILE)', async () => {
    const connection = mysql(mariadb);
    const table = `infile_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await runNode(palette, 'sqlNode', { query: `create table ${table} (line text)` }, connection);
    try {
      const { outcome } = await runNode(
        palette,
        'sqlNode',
        { query: `load data local infile '/etc/hostname' into table ${table}` },
        connection,
      );
      expect(outcome.status).toBe('failed');
      const count = await runNode(palette, 'sqlNode', { query: `select count(*) as n from ${table}` }, connection);
      expect(count.listener.output('Db')).toMatchObject({ rows: [{ n: 0 }] });
    } finally {
      await runNode(palette, 'sqlNode', { query: `drop table ${table}` }, connection);
    }
  });
});

describe('the outbound guard applies to database hosts', () => {
  test('with WEFT_OUTBOUND_BLOCK_PRIVATE loopback databases are refused before connecting', async () => {
    const palette = createNodePalette({ blockPrivate: true });
    try {
      const viaMysql = await runNode(palette, 'sqlNode', { query: 'select 1' }, mysql(mariadb));
      expect(viaMysql.outcome).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('not a public address'),
      });
      const viaName = await runNode(
        palette,
        'databaseNode',
        { table: 't', operation: 'select' },
        mysql({ ...mariadb, host: 'localhost' }),
      );
      expect(viaName.outcome).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('not a public address'),
      });
    } finally {
      await palette.close();
    }
  });

  test('cloud metadata addresses are refused whatever the settings', async () => {
    const palette = createNodePalette();
    try {
      const { outcome } = await runNode(
        palette,
        'sqlNode',
        { query: 'select 1' },
        postgres({ host: '169.254.169.254', user: 'x' }),
      );
      expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('cloud metadata') });
    } finally {
      await palette.close();
    }
  });

  test.each([
    ['postgres', postgres({ host: 'db.rebind.test', port: 5432, user: 'postgres', database: 'weft_test' })],
    ['mysql', mysql({ ...mariadb, host: 'db.rebind.test' })],
  ])('a %s pool connects to the address the guard checked, not to a second lookup', async (_name, connection) => {
    const lookups: string[] = [];
    const rebinding = async (hostname: string): Promise<ResolvedAddress[]> => {
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? '127.0.0.1' : '127.0.0.3', family: 4 }];
    };
    const palette = createNodePalette({ resolve: rebinding });
    try {
      const { outcome, listener } = await runNode(palette, 'sqlNode', { query: 'select 1 as one' }, connection);
      expect(outcome.status).toBe('completed');
      expect(listener.output('Db')).toMatchObject({ rows: [{ one: 1 }] });
      expect(lookups).toEqual(['db.rebind.test']);
    } finally {
      await palette.close();
    }
  });
});
