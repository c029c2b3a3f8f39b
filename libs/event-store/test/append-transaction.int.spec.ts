import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { APPEND_LOCK_NAMESPACE, openDatabase, PostgresEventStore } from '../src/index.js';
import { dropSchema, testDatabaseUrl, uniqueName } from './support/test-database.js';

/**
 * appendTransaction opens the transaction and takes the append lock in one round trip. A lock that
 * cannot be had fails that append only: its pooled connection goes back outside any transaction.
 */
describe('appendTransaction on PostgreSQL', () => {
  const schema = uniqueName('es_append_tx');
  let store: PostgresEventStore;
  let close: () => Promise<void>;
  let holder: pg.Client;

  beforeAll(async () => {
    // One pooled connection, so the append after the failed one runs on the very same session.
    const database = await openDatabase({ url: testDatabaseUrl(), schema, poolSize: 1, timeouts: { lockMs: 300 } });
    store = await PostgresEventStore.open(database);
    close = async () => {
      await store.close();
      await database.close();
      await dropSchema(schema);
    };
    holder = new pg.Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
  });
  afterAll(async () => {
    await holder.end();
    await close();
  });

  test('an append waiting past lock_timeout fails alone; the next one on the same connection commits', async () => {
    const { rows } = await holder.query<{ oid: number }>(`SELECT '"${schema}".events'::regclass::oid::int AS oid`);
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1, $2)', [APPEND_LOCK_NAMESPACE, rows[0]!.oid]);
    const streamId = `execution-${randomUUID()}`;
    await expect(store.append(streamId, [{ type: 'ExecutionStarted', data: { n: 1 } }])).rejects.toMatchObject({
      code: '55P03',
    });
    await holder.query('COMMIT');

    await store.append(streamId, [{ type: 'ExecutionStarted', data: { n: 2 } }]);
    expect((await store.readStream(streamId)).map((event) => event.data)).toEqual([{ n: 2 }]);
  });
});
