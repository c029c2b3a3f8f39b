import { BOOTSTRAP_KEY, client } from './weft-harness.js';
import { startWeftIn, type WeftUnderTest } from './weft-modes.js';

/**
 * Black box: a distributed Weft on PostgreSQL at 127.0.0.1:5432 refuses a tenant's SQL node that
 * points at that same server (any database on it, any loopback spelling), so no tenant reads
 * the event store or writes a system key.
 */
describe("a tenant's database connection to the service's own PostgreSQL", () => {
  let under: WeftUnderTest;
  beforeAll(async () => {
    under = await startWeftIn('distributed');
  });
  afterAll(() => under?.dispose());

  test.each(['postgres://postgres@127.0.0.1:5432/postgres', 'postgres://postgres@localhost:5432/postgres'])(
    '%s fails the SQL node before connecting',
    async (tenantUrl) => {
      const call = client(under.weft.url, BOOTSTRAP_KEY);
      const org = await call('POST', '/api/v1/organizations', { name: 'Tenant' });
      const connection = await call('POST', `/api/v1/connections/by-org/${org.body.id}`, {
        type: 'postgres',
        name: 'warehouse',
        data: { url: tenantUrl },
      });
      expect(connection.status).toBe(201);
      const created = await call('POST', `/api/v1/processes/by-org/${org.body.id}`, {
        name: 'read events',
        nodes: [
          { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
          {
            id: 'sql',
            type: 'sqlNode',
            position: { x: 1, y: 0 },
            config: { label: 'Read', connectionId: connection.body.id, query: 'select datname from pg_database' },
          },
        ],
        edges: [{ source_node_id: 'in', target_node_id: 'sql' }],
      });
      expect(created.status).toBe(201);
      const run = await call('POST', `/api/v1/processes/test/${created.body.id}`, {});
      expect(JSON.stringify(run.body)).toContain("the service's own database");
      expect(JSON.stringify(run.body)).not.toContain('weft_e2e_');
    },
  );
});
