import { randomUUID } from 'node:crypto';
import { ProblemError, type ProcessRecord } from '@weft/contracts';
import { rebuildReadModels } from '@weft/event-store';
import { catalogHttpHandlers } from '../src/adapters/http/catalog-http-handlers.js';
import { catalogProjections } from '../src/application/catalog-application.js';
import { ProcessCommands } from '../src/application/process-commands.js';
import { actorOf, backends, openHarness, type CatalogHarness } from './fixtures/catalog-harness.js';

/** The realistic process in the process form a client sends: local node keys, snake_case edges. */
const createBody = () => ({
  name: 'Order intake',
  description: 'Routes big orders to a discount',
  max_retries: 2,
  error_webhook_url: 'http://127.0.0.1:9/errors',
  timeout_seconds: 120,
  nodes: [
    { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'Order', triggerType: 'webhook' } },
    {
      id: 'if',
      type: 'conditionalNode',
      position: { x: 200, y: 0 },
      config: {
        label: 'Big order',
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["Order"]["amount"]}}', operator: 'gt', right: 100 }],
      },
    },
    {
      id: 'a',
      type: 'scriptNode',
      position: { x: 400, y: -100 },
      config: { label: 'Discount', code: 'return { total: input["Order"].amount * 0.9 };' },
    },
    {
      id: 'b',
      type: 'scriptNode',
      position: { x: 400, y: 100 },
      config: { label: 'Full price', code: 'return { total: input["Order"].amount };' },
    },
    {
      id: 'out',
      type: 'outputNode',
      position: { x: 600, y: 0 },
      config: { label: 'Reply', returnToClient: true, fields: { order: '{{input["Order"]["id"]}}' } },
    },
  ],
  edges: [
    { source_node_id: 'in', target_node_id: 'if' },
    { source_node_id: 'if', target_node_id: 'a', source_handle: 'true' },
    { source_node_id: 'if', target_node_id: 'b', source_handle: 'false' },
    { source_node_id: 'a', target_node_id: 'out' },
    { source_node_id: 'b', target_node_id: 'out' },
  ],
});

const nodeId = (record: ProcessRecord, label: string): string => {
  const node = record.nodes.find((candidate) => candidate.config.label === label);
  if (!node) throw new Error(`no node ${label}`);
  return node.id;
};

describe.each(backends())('process catalog on %s', (backend) => {
  let harness: CatalogHarness;
  const org = randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    harness = await openHarness(backend);
  });
  afterAll(async () => {
    await harness.close();
  });

  const create = async (): Promise<ProcessRecord> => {
    const reply = await harness.call('createProcess', actor, { params: { org_id: org }, body: createBody() });
    expect(reply.status).toBe(201);
    return reply.body as ProcessRecord;
  };

  test('creates a process record with every field the spec names', async () => {
    const record = await create();
    expect(record).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      organization_id: org,
      name: 'Order intake',
      description: 'Routes big orders to a discount',
      max_retries: 2,
      is_running: false,
      locked: false,
      error_webhook_url: 'http://127.0.0.1:9/errors',
      timeout_seconds: 120,
      nodes: expect.any(Array),
      edges: expect.any(Array),
      versions: [],
      created_by: 'Grace Hopper',
      created_by_id: actor.userId,
      created_at: expect.any(String),
      updated_at: record.created_at,
      revision: 1,
    });
    expect(record.nodes).toHaveLength(5);
    expect(record.nodes.every((node) => /^[0-9a-f-]{36}$/.test(node.id))).toBe(true);
    const ifId = nodeId(record, 'Big order');
    expect(record.edges).toContainEqual({
      id: expect.any(String),
      source_node_id: ifId,
      target_node_id: nodeId(record, 'Discount'),
      source_handle: 'true',
      target_handle: 'input',
    });
    const got = await harness.call('getProcess', actor, { params: { id: record.id } });
    expect(got).toEqual({ status: 200, body: record, headers: { etag: '"1"' } });
  });

  test('edits the graph: add, update with label rename, delete node with its edges, add and delete edge', async () => {
    const record = await create();
    const params = { id: record.id };
    const added = await harness.call('addNode', actor, {
      params,
      body: { type: 'waitNode', position: { x: 5, y: 5 }, config: { label: 'Pause', seconds: 1 } },
    });
    expect(added.status).toBe(201);
    expect(added.headers).toEqual({ etag: '"2"' });
    const pauseId = (added.body as { id: string }).id;

    const edge = await harness.call('addEdge', actor, {
      params,
      body: { source_node_id: nodeId(record, 'Order'), target_node_id: pauseId },
    });
    expect(edge.status).toBe(201);
    expect(edge.body).toEqual({
      id: expect.any(String),
      source_node_id: nodeId(record, 'Order'),
      target_node_id: pauseId,
      source_handle: 'output',
      target_handle: 'input',
    });

    const renamed = await harness.call('updateNode', actor, {
      params: { ...params, node_id: nodeId(record, 'Order') },
      body: { config: { label: 'Purchase', triggerType: 'webhook' } },
      headers: { 'if-match': '"3"' },
    });
    expect(renamed.status).toBe(200);
    const afterRename = (await harness.call('getProcess', actor, { params })).body as ProcessRecord;
    expect(afterRename.revision).toBe(4);
    const reply = afterRename.nodes.find((node) => node.config.label === 'Reply');
    expect(reply?.config.fields).toEqual({ order: '{{input["Purchase"]["id"]}}' });

    const deleted = await harness.call('deleteNode', actor, { params: { ...params, node_id: pauseId } });
    expect(deleted.status).toBe(200);
    const afterDelete = deleted.body as ProcessRecord;
    expect(afterDelete.nodes.map((node) => node.id)).not.toContain(pauseId);
    expect(afterDelete.edges.some((e) => e.target_node_id === pauseId)).toBe(false);
    expect(afterDelete.edges).toHaveLength(5);

    const edgeId = afterDelete.edges[0]!.id;
    const edgeDeleted = await harness.call('deleteEdge', actor, { params: { ...params, edge_id: edgeId } });
    expect((edgeDeleted.body as ProcessRecord).edges).toHaveLength(4);
  });

  test('bad input answers 4xx and changes nothing', async () => {
    const record = await create();
    const params = { id: record.id };
    const cases: [string, Promise<{ status: number; body?: any }>, number][] = [
      [
        'edge to unknown node',
        harness.call('addEdge', actor, {
          params,
          body: { source_node_id: nodeId(record, 'Order'), target_node_id: randomUUID() },
        }),
        400,
      ],
      [
        'edge from a missing handle',
        harness.call('addEdge', actor, {
          params,
          body: {
            source_node_id: nodeId(record, 'Big order'),
            target_node_id: nodeId(record, 'Reply'),
            source_handle: 'maybe',
          },
        }),
        400,
      ],
      [
        'duplicate label',
        harness.call('addNode', actor, { params, body: { type: 'waitNode', config: { label: 'Reply' } } }),
        400,
      ],
      [
        'used node id',
        harness.call('addNode', actor, {
          params,
          body: { id: nodeId(record, 'Reply'), type: 'waitNode', config: { label: 'W' } },
        }),
        409,
      ],
      [
        'node id not a UUID',
        harness.call('addNode', actor, { params, body: { id: 'n1', type: 'waitNode', config: { label: 'W' } } }),
        400,
      ],
      [
        'stale If-Match',
        harness.call('updateProcess', actor, { params, body: { name: 'x' }, headers: { 'if-match': '"0"' } }),
        409,
      ],
      [
        'bad If-Match',
        harness.call('updateProcess', actor, { params, body: { name: 'x' }, headers: { 'if-match': 'yesterday' } }),
        400,
      ],
      ['unknown node', harness.call('deleteNode', actor, { params: { ...params, node_id: randomUUID() } }), 404],
      ['unknown process', harness.call('getProcess', actor, { params: { id: randomUUID() } }), 404],
      ['another organization', harness.call('getProcess', actorOf(randomUUID()), { params }), 404],
      ['another organization edits', harness.call('lockProcess', actorOf(randomUUID()), { params }), 404],
      [
        'key restricted to other processes',
        harness.call('getProcess', actorOf(org, { processIds: [randomUUID()] }), { params }),
        403,
      ],
      [
        'bad webhook url',
        harness.call('updateProcess', actor, { params, body: { error_webhook_url: 'ftp://x' } }),
        400,
      ],
    ];
    for (const [name, pending, status] of cases) {
      const reply = await pending;
      expect([name, reply.status]).toEqual([name, status]);
      expect(reply.body).toMatchObject({ status });
    }
    const after = (await harness.call('getProcess', actor, { params })).body as ProcessRecord;
    expect(after).toEqual(record);
  });

  test('an edit racing another edit gets 409, never a lost update', async () => {
    const record = await create();
    const params = { id: record.id };
    // The four edits are made to race for sure: each one's append waits until all four have loaded the process.
    const racers = 4;
    let arrived = 0;
    let release!: () => void;
    const allLoaded = new Promise<void>((resolve) => (release = resolve));
    const racingStore = new Proxy(harness.store, {
      get(target, property) {
        if (property === 'append')
          return async (...args: Parameters<typeof target.append>) => {
            if (++arrived === racers) release();
            await allLoaded;
            return target.append(...args);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const handlers = catalogHttpHandlers({
      ...harness.app,
      processes: new ProcessCommands(racingStore, harness.app.runtime),
    });
    const replies = await Promise.all(
      ['A', 'B', 'C', 'D'].map((suffix) =>
        handlers
          .addNode(
            {
              params,
              query: {},
              headers: {},
              body: { type: 'waitNode', config: { label: `Pause ${suffix}`, seconds: 1 } },
            },
            { actor, traceId: 'race' },
          )
          .catch((error: unknown) => {
            if (error instanceof ProblemError) return { status: error.status, body: error.problem };
            throw error;
          }),
      ),
    );
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, 409, 409, 409]);
    for (const reply of replies.filter((r) => r.status === 409)) {
      expect(reply.body).toMatchObject({ status: 409, currentRevision: record.revision + 1 });
    }
    const winner = replies.find((reply) => reply.status === 201)!.body as { config: { label: string } };
    const after = (await harness.call('getProcess', actor, { params })).body as ProcessRecord;
    expect(after.nodes.map((node) => node.config.label)).toEqual([
      ...record.nodes.map((node) => node.config.label),
      winner.config.label,
    ]);
    expect(after.revision).toBe(record.revision + 1);
    const stream = await harness.store.readStream(`process-${record.id}`);
    expect(stream.map((event) => event.type)).toEqual(['ProcessCreated', 'NodeAdded']);
  });

  test('lock freezes nodes, edges and settings but start and stop still work', async () => {
    const record = await create();
    const params = { id: record.id };
    expect((await harness.call('lockProcess', actor, { params })).body).toMatchObject({ locked: true });
    const refused = [
      await harness.call('addNode', actor, { params, body: { type: 'waitNode', config: { label: 'W' } } }),
      await harness.call('updateNode', actor, {
        params: { ...params, node_id: nodeId(record, 'Reply') },
        body: { position: { x: 1, y: 2 } },
      }),
      await harness.call('deleteNode', actor, { params: { ...params, node_id: nodeId(record, 'Reply') } }),
      await harness.call('addEdge', actor, {
        params,
        body: { source_node_id: nodeId(record, 'Order'), target_node_id: nodeId(record, 'Reply') },
      }),
      await harness.call('deleteEdge', actor, { params: { ...params, edge_id: record.edges[0]!.id } }),
      await harness.call('replaceGraph', actor, { params, body: { nodes: [], edges: [] } }),
      await harness.call('updateProcess', actor, { params, body: { name: 'Renamed' } }),
      await harness.call('deleteProcess', actor, { params }),
    ];
    expect(refused.map((reply) => reply.status)).toEqual(Array(8).fill(423));
    expect((await harness.call('startProcess', actor, { params })).body).toMatchObject({
      is_running: true,
      locked: true,
    });
    expect((await harness.call('stopProcess', actor, { params })).body).toMatchObject({ is_running: false });
    const unlocked = (await harness.call('unlockProcess', actor, { params })).body as ProcessRecord;
    expect({ ...unlocked, locked: true, updated_at: '', revision: 0 }).toEqual({
      ...record,
      locked: true,
      updated_at: '',
      revision: 0,
    });
    const events = await harness.store.readStream(`process-${record.id}`);
    expect(events.map((event) => event.type)).toEqual([
      'ProcessCreated',
      'ProcessLocked',
      'ProcessStarted',
      'ProcessStopped',
      'ProcessUnlocked',
    ]);
    expect(events[2]!.metadata).toMatchObject({
      actorId: actor.userId,
      actorName: 'Grace Hopper',
      organizationId: org,
      processId: record.id,
      traceId: 'trace-startProcess',
    });
  });

  test('start refuses a process that fails lint, with the findings', async () => {
    const record = await create();
    const params = { id: record.id };
    await harness.call('deleteNode', actor, { params: { ...params, node_id: nodeId(record, 'Reply') } });
    const reply = await harness.call('startProcess', actor, { params });
    expect(reply.status).toBe(400);
    expect(reply.body.findings.map((finding: { check: string }) => finding.check)).toEqual(
      expect.arrayContaining(['output-node-exists']),
    );
    const lint = await harness.call('lintProcess', actor, { params });
    expect(lint.body.valid).toBe(false);
    expect(((await harness.call('getProcess', actor, { params })).body as ProcessRecord).is_running).toBe(false);
  });

  test('versions: create, list newest first, get snapshot, restore exactly, delete', async () => {
    const record = await create();
    const params = { process_id: record.id };
    const v1 = await harness.call('createVersion', actor, { params, body: { label: 'first' } });
    expect(v1).toEqual({
      status: 201,
      body: {
        id: expect.any(String),
        versionNumber: 1,
        label: 'first',
        createdBy: 'Grace Hopper',
        createdAt: expect.any(String),
      },
    });
    await harness.call('replaceGraph', actor, {
      params: { id: record.id },
      body: { nodes: [{ type: 'inputNode', config: { label: 'Only', triggerType: 'manual' } }], edges: [] },
    });
    const v2 = await harness.call('createVersion', actor, { params, body: { label: 'second' } });
    expect(v2.body.versionNumber).toBe(2);
    const list = await harness.call('listVersions', actor, { params });
    expect(list.body.map((version: { versionNumber: number }) => version.versionNumber)).toEqual([2, 1]);
    const full = await harness.call('getVersion', actor, { params: { version_id: v1.body.id } });
    expect(full.body).toEqual({
      id: v1.body.id,
      processId: record.id,
      organizationId: org,
      versionNumber: 1,
      label: 'first',
      createdBy: 'Grace Hopper',
      createdById: actor.userId,
      createdAt: v1.body.createdAt,
      snapshot: {
        nodes: record.nodes,
        edges: record.edges.map((edge) => ({
          id: edge.id,
          sourceNodeId: edge.source_node_id,
          targetNodeId: edge.target_node_id,
          sourceHandle: edge.source_handle,
          targetHandle: edge.target_handle,
        })),
      },
    });
    expect(
      (await harness.call('getVersion', actorOf(randomUUID()), { params: { version_id: v1.body.id } })).status,
    ).toBe(404);
    expect(
      (await harness.call('restoreVersion', actorOf(randomUUID()), { params: { version_id: v1.body.id } })).status,
    ).toBe(404);

    const restored = await harness.call('restoreVersion', actor, { params: { version_id: v1.body.id } });
    expect(restored.status).toBe(200);
    expect(restored.body.nodes).toEqual(record.nodes);
    expect(restored.body.edges).toEqual(record.edges);
    expect(restored.body.versions.map((version: { versionNumber: number }) => version.versionNumber)).toEqual([2, 1]);

    expect((await harness.call('deleteVersion', actor, { params: { version_id: v1.body.id } })).status).toBe(204);
    expect((await harness.call('getVersion', actor, { params: { version_id: v1.body.id } })).status).toBe(404);
    const v3 = await harness.call('createVersion', actor, { params, body: { label: 'third' } });
    expect(v3.body.versionNumber).toBe(3);
  });

  test('history lists every event and ?at= rebuilds the past', async () => {
    const record = await create();
    const params = { id: record.id };
    await harness.call('updateProcess', actor, { params, body: { name: 'Renamed' } });
    const history = await harness.call('processHistory', actor, { params, query: {} });
    expect(history.body).toMatchObject({ page: 1, pageSize: 20, total: 2 });
    expect(history.body.items[1]).toEqual({
      revision: 2,
      type: 'ProcessSettingsChanged',
      at: expect.any(String),
      recordedAt: expect.any(String),
      actor: { id: actor.userId, name: 'Grace Hopper' },
      traceId: 'trace-updateProcess',
      correlationId: null,
      summary: 'changed name',
    });
    const second = await harness.call('processHistory', actor, { params, query: { page: '2', pageSize: '1' } });
    expect(second.body).toEqual({ items: [history.body.items[1]], page: 2, pageSize: 1, total: 2 });
    const past = await harness.call('getProcess', actor, {
      params,
      query: { at: (history.body.items[0] as { recordedAt: string }).recordedAt },
    });
    expect(past.body).toEqual(record);
  });

  test('lists by organization with search and paging', async () => {
    const listOrg = randomUUID();
    const listActor = actorOf(listOrg);
    for (const name of ['Alpha', 'Beta', 'Alphabet']) {
      await harness.call('createProcess', listActor, { params: { org_id: listOrg }, body: { name } });
    }
    const all = await harness.call('listProcesses', listActor, {
      params: { org_id: listOrg },
      query: { pageSize: '2' },
    });
    expect(all.body).toMatchObject({ page: 1, pageSize: 2, total: 3 });
    expect(all.body.items.map((item: ProcessRecord) => item.name)).toEqual(['Alpha', 'Alphabet']);
    const search = await harness.call('listProcesses', listActor, {
      params: { org_id: listOrg },
      query: { search: 'alph' },
    });
    expect(search.body.items.map((item: ProcessRecord) => item.name)).toEqual(['Alpha', 'Alphabet']);
    expect((await harness.call('listProcesses', actor, { params: { org_id: listOrg }, query: {} })).status).toBe(404);
    expect(
      (await harness.call('listProcesses', listActor, { params: { org_id: listOrg }, query: { pageSize: '500' } }))
        .status,
    ).toBe(400);
  });

  test('the read models rebuilt from the events equal the originals', async () => {
    const record = await create();
    await harness.call('createVersion', actor, { params: { process_id: record.id }, body: { label: 'v' } });
    await harness.call('lockProcess', actor, { params: { id: record.id } });
    const snapshot = async () => ({
      processes: await harness.store.db.selectFrom('catalog_processes').selectAll().orderBy('id').execute(),
      versions: await harness.store.db.selectFrom('catalog_process_versions').selectAll().orderBy('id').execute(),
    });
    const before = await snapshot();
    expect(before.processes.length).toBeGreaterThan(0);
    await rebuildReadModels(harness.store, catalogProjections);
    expect(await snapshot()).toEqual(before);
  });

  test('delete removes the process and its versions', async () => {
    const record = await create();
    await harness.call('createVersion', actor, { params: { process_id: record.id }, body: { label: 'v' } });
    expect((await harness.call('deleteProcess', actor, { params: { id: record.id } })).status).toBe(204);
    expect((await harness.call('getProcess', actor, { params: { id: record.id } })).status).toBe(404);
    expect((await harness.call('listVersions', actor, { params: { process_id: record.id } })).status).toBe(404);
  });

  test('the audit history of a deleted process stays readable by its organization only', async () => {
    const record = await create();
    const discount = nodeId(record, 'Discount');
    await harness.call('deleteNode', actor, { params: { id: record.id, node_id: discount } });
    expect((await harness.call('deleteProcess', actor, { params: { id: record.id } })).status).toBe(204);
    const history = await harness.call('processHistory', actor, { params: { id: record.id }, query: {} });
    expect(history.status).toBe(200);
    expect((history.body as { items: { type: string; summary: string }[] }).items.map((item) => item.type)).toEqual([
      'ProcessCreated',
      'NodeDeleted',
      'ProcessDeleted',
    ]);
    // Summaries name nodes by label, as the process stood before the event.
    expect((history.body as { items: { summary: string }[] }).items[1]?.summary).toBe(
      'deleted node "Discount" (scriptNode) and 2 edges',
    );
    const stranger = actorOf(randomUUID());
    expect((await harness.call('processHistory', stranger, { params: { id: record.id }, query: {} })).status).toBe(404);
  });
});
