import { randomUUID } from 'node:crypto';
import type { ProcessDocument, ProcessRecord } from '@weft/contracts';
import { actorOf, backends, openHarness, type CatalogHarness } from './fixtures/catalog-harness.js';

const orderBlock = {
  name: 'order',
  description: 'An incoming order',
  jsonSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
};

describe.each(backends())('schemas, export, import and fork on %s', (backend) => {
  let harness: CatalogHarness;
  const org = randomUUID();
  const otherOrg = randomUUID();
  const actor = actorOf(org);
  const otherActor = actorOf(otherOrg);

  beforeAll(async () => {
    harness = await openHarness(backend);
  });
  afterAll(async () => {
    await harness.close();
  });

  const createSchema = async () => {
    const reply = await harness.call('createSchema', actor, {
      params: { org_id: org },
      body: {
        name: 'Orders',
        description: 'Order payloads',
        dataBlocks: [orderBlock, { name: 'invoice', jsonSchema: { type: 'object' } }],
      },
    });
    expect(reply.status).toBe(201);
    return reply.body as { id: string; dataBlocks: { id: string; name: string }[] };
  };

  const processUsing = async (schema: { id: string; dataBlocks: { id: string; name: string }[] }) => {
    const reply = await harness.call('createProcess', actor, {
      params: { org_id: org },
      body: {
        name: 'Schematized',
        nodes: [
          {
            id: 'in',
            type: 'inputNode',
            config: { label: 'In', triggerType: 'webhook', schemaId: schema.id, dataBlockId: schema.dataBlocks[0]!.id },
          },
          {
            id: 'parse',
            type: 'schematizationNode',
            config: {
              label: 'Parse',
              schemaId: schema.id,
              selectedDataBlocks: ['invoice'],
              mode: 'mapping',
              mappings: { invoice: '$' },
            },
          },
          { id: 'out', type: 'outputNode', config: { label: 'Out', fields: { total: '{{input["In"]["amount"]}}' } } },
        ],
        edges: [
          { source_node_id: 'in', target_node_id: 'parse' },
          { source_node_id: 'parse', target_node_id: 'out', source_handle: 'invoice' },
        ],
      },
    });
    expect(reply.status).toBe(201);
    return reply.body as ProcessRecord;
  };

  test('a schema keeps its data blocks; a block that does not compile is a 400 that stores nothing', async () => {
    const schema = await createSchema();
    expect(schema).toEqual({
      id: expect.any(String),
      organizationId: org,
      name: 'Orders',
      description: 'Order payloads',
      dataBlocks: [
        { id: expect.any(String), ...orderBlock },
        { id: expect.any(String), name: 'invoice', description: '', jsonSchema: { type: 'object' } },
      ],
      createdBy: 'Grace Hopper',
      createdById: actor.userId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      revision: 1,
    });
    const bad = await harness.call('createSchema', actor, {
      params: { org_id: org },
      body: {
        name: 'Broken',
        dataBlocks: [
          { name: 'b', jsonSchema: { type: 'no-such-type' } },
          { name: 'b', jsonSchema: {} },
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((error: { path: string }) => error.path)).toEqual([
      '/dataBlocks/0/jsonSchema',
      '/dataBlocks/1/name',
    ]);
    const list = await harness.call('listSchemas', actor, { params: { org_id: org }, query: {} });
    expect(list.body.items.map((item: { name: string }) => item.name)).toEqual(['Orders']);
    expect((await harness.call('getSchema', otherActor, { params: { id: schema.id } })).status).toBe(404);
    const changed = await harness.call('updateSchema', actor, {
      params: { id: schema.id },
      body: { description: 'Changed' },
    });
    expect(changed.body).toMatchObject({ description: 'Changed', revision: 2 });
  });

  test('lint resolves schema references; a deleted schema makes lint fail', async () => {
    const schema = await createSchema();
    const record = await processUsing(schema);
    expect((await harness.call('lintProcess', actor, { params: { id: record.id } })).body).toEqual({
      valid: true,
      findings: [],
    });
    expect((await harness.call('deleteSchema', actor, { params: { id: schema.id } })).status).toBe(204);
    const lint = await harness.call('lintProcess', actor, { params: { id: record.id } });
    expect(lint.body.findings.map((finding: { check: string }) => finding.check)).toEqual([
      'schema-references',
      'schema-references',
    ]);
  });

  test('an export imports unchanged into another organization, creating its schemas; re-import reuses them', async () => {
    const schema = await createSchema();
    const record = await processUsing(schema);
    const exported = (await harness.call('exportProcess', actor, { params: { id: record.id } }))
      .body as ProcessDocument;
    expect(exported).toMatchObject({
      formatVersion: 1,
      name: 'Schematized',
      description: '',
      maxRetries: 0,
      errorWebhookUrl: null,
      timeoutSeconds: 300,
      schemaDependencies: { [schema.id]: { id: schema.id, name: 'Orders', dataBlocks: expect.any(Array) } },
    });
    expect(exported.edges[1]).toEqual({
      id: record.edges[1]!.id,
      sourceNodeId: record.edges[1]!.source_node_id,
      targetNodeId: record.edges[1]!.target_node_id,
      sourceHandle: 'invoice',
      targetHandle: 'input',
    });

    const imported = await harness.call('importProcesses', otherActor, { params: { orgId: otherOrg }, body: exported });
    expect(imported.status).toBe(201);
    const copy = imported.body as ProcessRecord;
    expect(copy.organization_id).toBe(otherOrg);
    expect(copy.nodes.map((node) => node.id).some((id) => record.nodes.some((node) => node.id === id))).toBe(false);
    const newSchemaId = copy.nodes[0]!.config.schemaId as string;
    expect(newSchemaId).not.toBe(schema.id);
    const newSchema = await harness.call('getSchema', otherActor, { params: { id: newSchemaId } });
    expect(newSchema.body).toMatchObject({ organizationId: otherOrg, name: 'Orders' });
    expect(copy.nodes[0]!.config.dataBlockId).toBe(schema.dataBlocks[0]!.id);
    expect((await harness.call('lintProcess', otherActor, { params: { id: copy.id } })).body.valid).toBe(true);
    expect(copy.edges.map((edge) => edge.source_handle)).toEqual(['output', 'invoice']);

    const again = await harness.call('importProcesses', actor, { params: { orgId: org }, body: exported });
    expect(again.status).toBe(201);
    expect((again.body as ProcessRecord).nodes[0]!.config.schemaId).toBe(schema.id);
    const schemas = await harness.call('listSchemas', actor, { params: { org_id: org }, query: { pageSize: '200' } });
    expect(schemas.body.items.filter((item: { id: string }) => item.id === schema.id)).toHaveLength(1);
  });

  test('a malformed document is rejected whole with every problem listed; arrays report per document', async () => {
    const before = await harness.store.readAll();
    const bad = await harness.call('importProcesses', actor, {
      params: { orgId: org },
      body: {
        name: 'Broken',
        nodes: [
          { id: 'a', type: 'inputNode', config: { label: 'A', triggerType: 'manual', schemaId: randomUUID() } },
          { id: 'b', type: 'conditionalNode', config: { label: 'B', mode: 'conditions' } },
        ],
        edges: [
          { sourceNodeId: 'a', targetNodeId: 'ghost' },
          { sourceNodeId: 'b', targetNodeId: 'a', sourceHandle: 'maybe' },
        ],
        schemaDependencies: { x: { name: 'X', dataBlocks: [{ name: 'x', jsonSchema: { type: 7 } }] } },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(
      [
        '/schemaDependencies/x/dataBlocks/0/jsonSchema',
        '/nodes/0/config/schemaId',
        '/edges/0/targetNodeId',
        '/edges/1/sourceHandle',
      ].sort(),
    );
    const shape = await harness.call('importProcesses', actor, { params: { orgId: org }, body: { nodes: 'x' } });
    expect(shape.status).toBe(400);
    expect(shape.body.errors).toEqual(
      expect.arrayContaining([
        { path: '/name', message: 'is required' },
        { path: '/edges', message: 'is required' },
        { path: '/nodes', message: expect.any(String) },
      ]),
    );
    expect(await harness.store.readAll()).toHaveLength(before.length);

    const batch = await harness.call('importProcesses', actor, {
      params: { orgId: org },
      body: [
        { name: 'Fine', nodes: [{ type: 'inputNode', config: { label: 'I', triggerType: 'manual' } }], edges: [] },
        { name: '' },
      ],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results).toEqual([
      { index: 0, status: 201, processId: expect.any(String) },
      { index: 1, status: 400, errors: expect.arrayContaining([{ path: '/1/name', message: expect.any(String) }]) },
    ]);
  });

  test('fork duplicates nodes, edges and configs with new ids and shares schema references', async () => {
    const schema = await createSchema();
    const record = await processUsing(schema);
    const fork = await harness.call('forkProcess', actor, { params: { id: record.id }, body: { name: 'Forked' } });
    expect(fork.status).toBe(201);
    const copy = fork.body as ProcessRecord;
    expect(copy).toMatchObject({
      name: 'Forked',
      organization_id: org,
      is_running: false,
      locked: false,
      revision: 1,
      versions: [],
    });
    expect(copy.id).not.toBe(record.id);
    expect(copy.nodes.map((node) => node.config)).toEqual(record.nodes.map((node) => node.config));
    expect(copy.nodes.map((node) => node.type)).toEqual(record.nodes.map((node) => node.type));
    const originalIds = new Set([...record.nodes.map((node) => node.id), ...record.edges.map((edge) => edge.id)]);
    expect(
      [...copy.nodes.map((node) => node.id), ...copy.edges.map((edge) => edge.id)].some((id) => originalIds.has(id)),
    ).toBe(false);
    const byId = new Map(copy.nodes.map((node) => [node.id, node.config.label]));
    expect(
      copy.edges.map((edge) => [byId.get(edge.source_node_id), edge.source_handle, byId.get(edge.target_node_id)]),
    ).toEqual([
      ['In', 'output', 'Parse'],
      ['Parse', 'invoice', 'Out'],
    ]);
    expect(
      (await harness.call('forkProcess', otherActor, { params: { id: record.id }, body: { name: 'x' } })).status,
    ).toBe(404);
  });
});
