import type { DecryptedConnection } from '@weft/contracts';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';
import { databaseNodeExecutor } from '../src/adapters/nodes/database-node.js';
import { SqlConnections } from '../src/adapters/nodes/sql-connections.js';
import { sqlNodeExecutor, toMysqlPlaceholders } from '../src/adapters/nodes/sql-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';
import { testDatabaseUrl, testMysqlConnection } from './support/test-services.js';

const pgUrl = testDatabaseUrl();
const connectionsUnderTest: DecryptedConnection[] = [
  { id: 'pg', organizationId: 'org', type: 'postgres', name: 'pg', data: { url: pgUrl } },
  {
    id: 'my',
    organizationId: 'org',
    type: 'mysql',
    name: 'mariadb',
    data: testMysqlConnection(),
  },
];

test('MySQL placeholders are rewritten outside quotes and params reordered', () => {
  expect(toMysqlPlaceholders("select $2, '$1', $1", ['a', 'b'])).toEqual({
    sql: "select ?, '$1', ?",
    params: ['b', 'a'],
  });
});

describe.each(connectionsUnderTest)('sql and database nodes on $name', (connection) => {
  const pools = new SqlConnections(new OutboundGuard({ blockPrivate: false }));
  const executors = pureExecutors(sqlNodeExecutor(pools), databaseNodeExecutor(pools));
  const table = `engine_items_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const pg = connection.type === 'postgres';

  const run = async (type: string, config: Record<string, unknown>, data: unknown = {}) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Db', type, { connectionId: connection.id, ...config })
      .edge('In', 'Db');
    const result = await runInMemory(g.snapshot(), g.id('In'), data, {
      executors,
      connections: { [connection.id]: connection },
    });
    if (result.outcome.status !== 'completed') throw new Error(JSON.stringify(result.outcome));
    return result.listener.output('Db') as { rows: Record<string, unknown>[]; rowCount: number };
  };

  beforeAll(async () => {
    await run('sqlNode', {
      query: `create table ${table} (sku varchar(40) primary key, name varchar(200), qty integer)`,
    });
  });
  afterAll(async () => {
    await run('sqlNode', { query: `drop table ${table}` });
    await pools.close();
  });

  test('sqlNode binds parameters from templates, never concatenating values', async () => {
    const hostile = "x'); drop table " + table + '; --';
    await run(
      'sqlNode',
      {
        query: `insert into ${table} (sku, name, qty) values ($1, $2, $3)`,
        params: ['{{input["In"]["sku"]}}', '{{input["In"]["name"]}}', 3],
      },
      { sku: 'A-1', name: hostile },
    );
    const out = await run('sqlNode', { query: `select sku, name, qty from ${table} where sku = $1`, params: ['A-1'] });
    expect(out.rowCount).toBe(1);
    expect(out.rows[0]).toEqual({ sku: 'A-1', name: hostile, qty: 3 });
  });

  test('sqlNode reports SQL errors as node failures', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Db', 'sqlNode', { connectionId: connection.id, query: 'select * from no_such_table_here' })
      .edge('In', 'Db');
    const { outcome } = await runInMemory(
      g.snapshot(),
      g.id('In'),
      {},
      { executors, connections: { [connection.id]: connection } },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('SQL failed') });
  });

  test('databaseNode insert, select, update, upsert and delete', async () => {
    const inserted = await run(
      'databaseNode',
      { table, operation: 'insert', values: { sku: 'B-1', name: '{{input["In"]["name"]}}', qty: 1 } },
      { name: 'Bolt' },
    );
    expect(inserted.rowCount).toBe(1);
    if (pg) expect(inserted.rows).toEqual([{ sku: 'B-1', name: 'Bolt', qty: 1 }]);

    const updated = await run('databaseNode', {
      table,
      operation: 'update',
      values: { qty: 5 },
      where: { sku: 'B-1' },
    });
    expect(updated.rowCount).toBe(1);

    await run('databaseNode', {
      table,
      operation: 'upsert',
      values: { sku: 'B-1', name: 'Bolt v2', qty: 6 },
      conflictColumns: ['sku'],
    });
    await run('databaseNode', {
      table,
      operation: 'upsert',
      values: { sku: 'B-2', name: 'Nut', qty: 1 },
      conflictColumns: ['sku'],
    });

    const selected = await run('databaseNode', { table, operation: 'select', where: { sku: 'B-1' }, limit: 10 });
    expect(selected.rows).toEqual([{ sku: 'B-1', name: 'Bolt v2', qty: 6 }]);

    const deleted = await run('databaseNode', { table, operation: 'delete', where: { sku: 'B-2' } });
    expect(deleted.rowCount).toBe(1);
    const rest = await run('databaseNode', { table, operation: 'select', where: { name: 'Nut' } });
    expect(rest.rowCount).toBe(0);
  });
});
