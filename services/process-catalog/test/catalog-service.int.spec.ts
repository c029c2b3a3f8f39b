import { randomUUID } from 'node:crypto';
import { InMemoryBus, NatsBus, type Actor, type Bus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import {
  catalogHttp,
  catalogInternal,
  ProblemError,
  type HttpCall,
  type HttpReply,
  type ProcessRecord,
  type RequestSpec,
} from '@weft/contracts';
import { openDatabase, PostgresEventStore, type Database } from '@weft/event-store';
import { namespacedBus } from '@weft/test-support';
import { startProcessCatalogService, type RunningService } from '../src/index.js';
import { actorOf } from './fixtures/catalog-harness.js';
import { testDatabaseUrl, testNatsUrl } from './fixtures/test-services.js';

/** Real: the Nest service, its BusTransport, the bus (in-memory or NATS) and the store. Nothing stubbed. */
type Setup = { bus: 'in-memory' | 'nats'; db: 'pglite' | 'postgres' };

const setups: Setup[] = [
  { bus: 'in-memory', db: 'pglite' },
  { bus: 'nats', db: 'postgres' },
];

describe.each(setups)('catalog service over $bus bus on $db', ({ bus: busKind, db }) => {
  let bus: Bus;
  let database: Database;
  let store: PostgresEventStore;
  let service: RunningService;
  const org = randomUUID();
  const actor = actorOf(org);
  const config = { ...loadConfig({}), secretKey: 'a-test-secret-key-for-connections' };

  beforeAll(async () => {
    bus =
      busKind === 'nats'
        ? namespacedBus(
            await NatsBus.connect({ servers: testNatsUrl(), name: 'catalog-test' }),
            `t${randomUUID().slice(0, 8)}`,
          )
        : new InMemoryBus();
    database =
      db === 'postgres'
        ? await openDatabase({
            url: testDatabaseUrl(),
            schema: `test_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
          })
        : await openDatabase({ dataDir: 'memory://' });
    store = await PostgresEventStore.open(database);
    service = await startProcessCatalogService({ store, bus, config });
  });

  afterAll(async () => {
    await service.stop();
    await store.close();
    if (db === 'postgres') await database.db.schema.dropSchema(database.schema).ifExists().cascade().execute();
    await database.close();
    await bus.close();
  });

  const send = async (
    spec: RequestSpec<HttpCall, HttpReply>,
    call: Partial<HttpCall>,
    as: Actor = actor,
  ): Promise<HttpReply<any>> => {
    try {
      return await bus.request(spec, { params: {}, query: {}, body: undefined, headers: {}, ...call }, { actor: as });
    } catch (error) {
      if (error instanceof ProblemError) return { status: error.status, body: error.problem };
      throw error;
    }
  };

  test('serves process endpoints and the internal process subject through the bus', async () => {
    const created = await send(catalogHttp.createProcess, {
      params: { org_id: org },
      body: {
        name: 'Over the bus',
        nodes: [
          { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
          { id: 'out', type: 'outputNode', config: { label: 'Out' } },
        ],
        edges: [{ source_node_id: 'in', target_node_id: 'out' }],
      },
    });
    expect(created.status).toBe(201);
    const record = created.body as ProcessRecord;
    expect(record.edges).toEqual([
      expect.objectContaining({ source_node_id: record.nodes[0]!.id, target_node_id: record.nodes[1]!.id }),
    ]);

    const started = await send(catalogHttp.startProcess, { params: { id: record.id } });
    expect(started.body).toMatchObject({ is_running: true });

    const internal = await bus.request(catalogInternal.getProcess, { processId: record.id });
    expect(internal).toEqual({ ...record, is_running: true, revision: 2, updated_at: expect.any(String) });
    await expect(
      bus.request(catalogInternal.getProcess, { processId: record.id, organizationId: randomUUID() }),
    ).rejects.toMatchObject({
      status: 404,
    });

    const refused = await send(catalogHttp.addEdge, {
      params: { id: record.id },
      body: { source_node_id: record.nodes[0]!.id, target_node_id: randomUUID() },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      { path: '/target_node_id', message: expect.stringContaining('is not in the process') },
    ]);

    const noActor = await bus
      .request(catalogHttp.getProcess, { params: { id: record.id }, query: {}, body: undefined, headers: {} })
      .catch((error: unknown) => error);
    expect(noActor).toMatchObject({ status: 401 });
  });

  test('connections: secrets are encrypted at rest, never returned, and served decrypted internally', async () => {
    const secret = { connectionString: 'postgres://user:hunter2-very-secret@127.0.0.1/db' };
    const created = await send(catalogHttp.createConnection, {
      params: { org_id: org },
      body: { type: 'postgres', name: 'Warehouse', data: secret },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      organizationId: org,
      type: 'postgres',
      name: 'Warehouse',
      createdBy: actor.userName,
      createdById: actor.userId,
      createdAt: expect.any(String),
    });
    const id = created.body.id as string;
    const listed = await send(catalogHttp.listConnections, { params: { org_id: org } });
    expect(listed.body.items).toEqual([created.body]);
    expect(JSON.stringify(listed.body)).not.toContain('hunter2');
    expect((await send(catalogHttp.getConnection, { params: { id } }, actorOf(randomUUID()))).status).toBe(404);

    const events = await store.readStream(`connection-${id}`);
    expect(JSON.stringify(events)).not.toContain('hunter2');
    const rows = await store.db.selectFrom('catalog_connections').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain('hunter2');

    const decrypted = await bus.request(catalogInternal.getConnectionSecret, { connectionId: id, organizationId: org });
    expect(decrypted).toEqual({ id, organizationId: org, type: 'postgres', name: 'Warehouse', data: secret });
    await expect(
      bus.request(catalogInternal.getConnectionSecret, { connectionId: id, organizationId: randomUUID() }),
    ).rejects.toMatchObject({ status: 404 });

    expect((await send(catalogHttp.deleteConnection, { params: { id } })).status).toBe(204);
    expect((await send(catalogHttp.getConnection, { params: { id } })).status).toBe(404);
  });

  test('a restarted service on the same store applies each event once', async () => {
    const before = await send(catalogHttp.createProcess, { params: { org_id: org }, body: { name: 'Before restart' } });
    const params = { id: before.body.id as string };
    await send(catalogHttp.addNode, { params, body: { type: 'waitNode', config: { label: 'First', seconds: 1 } } });
    const record = (await send(catalogHttp.getProcess, { params })).body as ProcessRecord;

    await service.stop();
    service = await startProcessCatalogService({ store, bus, config });
    // Old events are not applied again: the record is what it was.
    expect((await send(catalogHttp.getProcess, { params })).body).toEqual(record);
    // A new event is applied once: one more node, one more revision (twice would add the node twice).
    const added = await send(catalogHttp.addNode, {
      params,
      body: { type: 'waitNode', config: { label: 'Second', seconds: 1 } },
    });
    expect(added.status).toBe(201);
    const after = (await send(catalogHttp.getProcess, { params })).body as ProcessRecord;
    expect(after.nodes.map((node) => node.config.label)).toEqual([
      ...record.nodes.map((node) => node.config.label),
      'Second',
    ]);
    expect(after.revision).toBe(record.revision + 1);
    const created = await send(catalogHttp.createProcess, { params: { org_id: org }, body: { name: 'After restart' } });
    expect(created.status).toBe(201);
    const rows = await store.db.selectFrom('catalog_processes').selectAll().where('id', '=', created.body.id).execute();
    expect(rows).toHaveLength(1);
  });
});
