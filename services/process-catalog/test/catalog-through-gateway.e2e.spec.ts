import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryBus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import {
  catalogHttp as catalogHttpByName,
  catalogRoutes,
  type ProcessDocument,
  type ProcessRecord,
} from '@weft/contracts';
import { openDatabase, PostgresEventStore } from '@weft/event-store';
import { createGateway } from '@weft/gateway';
import {
  DEPLOYMENT_START_TIMEOUT_MS,
  deploymentKind,
  type Deployment,
} from '../../all-in-one/test/support/deployment.js';
import { useSharedDeployment } from '../../all-in-one/test/support/shared-deployment.js';

/**
 * The whole public path, nothing stubbed: HTTP -> the gateway (API keys, body schemas,
 * organization checks) -> the bus -> the catalog -> the event store, on Weft as deployed
 * (support/deployment.ts: the all-in-one, or each service its own process on NATS and PostgreSQL).
 */
describe(`catalog through the gateway (${deploymentKind()})`, () => {
  let deployment: Deployment;
  let systemKey: string;

  const http = async (
    method: string,
    url: string,
    key: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${deployment.baseUrl}${url}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: text ? JSON.parse(text) : undefined,
    };
  };

  const organization = async (name: string) => {
    const org = await http('POST', '/api/v1/organizations', systemKey, { name });
    expect(org.status).toBe(201);
    const userId = randomUUID();
    const key = await http('POST', `/api/v1/api-keys/by-org/${org.body.id}`, systemKey, {
      name: 'e2e',
      userName: `${name} admin`,
      userId,
    });
    expect(key.status).toBe(201);
    return { id: org.body.id as string, key: key.body.key as string, userId, userName: `${name} admin` };
  };

  beforeAll(async () => {
    deployment = await useSharedDeployment();
    systemKey = deployment.key;
  }, DEPLOYMENT_START_TIMEOUT_MS);

  afterAll(async () => {
    await deployment?.stop();
  });

  test('a realistic process: create, edit, version, lock, export, import elsewhere, fork, restore, lint', async () => {
    const acme = await organization('Acme');
    const globex = await organization('Globex');

    // Create: input -> conditional (true/false) -> two scripts -> output.
    const created = await http('POST', `/api/v1/processes/by-org/${acme.id}`, acme.key, {
      name: 'Orders',
      description: 'Discount big orders',
      max_retries: 1,
      error_webhook_url: 'http://127.0.0.1:1/hook',
      timeout_seconds: 30,
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'Order', triggerType: 'webhook' } },
        {
          id: 'if',
          type: 'conditionalNode',
          position: { x: 1, y: 0 },
          config: {
            label: 'Big',
            mode: 'conditions',
            combinator: 'and',
            conditions: [{ left: '{{input["Order"]["amount"]}}', operator: 'gt', right: 100 }],
          },
        },
        {
          id: 'a',
          type: 'scriptNode',
          position: { x: 2, y: -1 },
          config: { label: 'Discount', code: 'return { total: input.Order.amount * 0.9 }' },
        },
        {
          id: 'b',
          type: 'scriptNode',
          position: { x: 2, y: 1 },
          config: { label: 'Full', code: 'return { total: input.Order.amount }' },
        },
        {
          id: 'out',
          type: 'outputNode',
          position: { x: 3, y: 0 },
          config: { label: 'Reply', returnToClient: true, fields: { id: '{{input["Order"]["id"]}}' } },
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
    expect(created.status).toBe(201);
    const record = created.body as ProcessRecord;
    expect(record).toMatchObject({
      organization_id: acme.id,
      name: 'Orders',
      description: 'Discount big orders',
      max_retries: 1,
      is_running: false,
      locked: false,
      error_webhook_url: 'http://127.0.0.1:1/hook',
      timeout_seconds: 30,
      versions: [],
      created_by: 'Acme admin',
      created_by_id: acme.userId,
      revision: 1,
    });
    const id = record.id;
    const nodeId = (label: string) => record.nodes.find((node) => node.config.label === label)!.id;

    // The gateway validates bodies and organizations before the catalog sees them.
    expect((await http('POST', `/api/v1/processes/by-org/${acme.id}`, acme.key, { name: 'x', bogus: 1 })).status).toBe(
      400,
    );
    expect((await http('GET', `/api/v1/processes/by-id/${id}`, globex.key)).status).toBe(404);
    expect((await http('POST', `/api/v1/processes/by-org/${acme.id}`, globex.key, { name: 'x' })).status).toBe(404);

    // Edit: rename a label (references follow), with If-Match; a stale one is 409.
    const renamed = await http(
      'PUT',
      `/api/v1/processes/${id}/nodes/${nodeId('Order')}`,
      acme.key,
      { config: { label: 'Purchase', triggerType: 'webhook' } },
      { 'if-match': '"1"' },
    );
    expect(renamed.status).toBe(200);
    expect(renamed.headers.etag).toBe('"2"');
    const stale = await http('PUT', `/api/v1/processes/by-id/${id}`, acme.key, { name: 'Late' }, { 'if-match': '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.headers['content-type']).toContain('application/problem+json');

    // Version, then lock: edits answer 423, start still works.
    const version = await http('POST', `/api/v1/processes/versions/${id}`, acme.key, { label: 'v1' });
    expect(version.status).toBe(201);
    expect(version.body).toEqual({
      id: expect.any(String),
      versionNumber: 1,
      label: 'v1',
      createdBy: 'Acme admin',
      createdAt: expect.any(String),
    });
    expect((await http('POST', `/api/v1/processes/lock/${id}`, acme.key)).body.locked).toBe(true);
    expect(
      (
        await http('POST', `/api/v1/processes/${id}/nodes`, acme.key, {
          type: 'waitNode',
          config: { label: 'W', seconds: 1 },
        })
      ).status,
    ).toBe(423);
    expect((await http('POST', `/api/v1/processes/start/${id}`, acme.key)).body.is_running).toBe(true);
    expect((await http('POST', `/api/v1/processes/stop/${id}`, acme.key)).body.is_running).toBe(false);
    expect((await http('POST', `/api/v1/processes/unlock/${id}`, acme.key)).body.locked).toBe(false);

    // Lint is clean; break the graph, lint finds it.
    expect((await http('POST', `/api/v1/processes/${id}/lint`, acme.key)).body).toEqual({ valid: true, findings: [] });
    const broken = await http('DELETE', `/api/v1/processes/${id}/nodes/${nodeId('Discount')}`, acme.key);
    expect(broken.status).toBe(200);
    const lint = await http('POST', `/api/v1/processes/${id}/lint`, acme.key);
    expect(lint.body.valid).toBe(true);
    const orphaned = await http(
      'DELETE',
      `/api/v1/processes/${id}/edges/${broken.body.edges.find((e: { source_handle: string }) => e.source_handle === 'false').id}`,
      acme.key,
    );
    expect(orphaned.status).toBe(200);
    expect(
      (await http('POST', `/api/v1/processes/${id}/lint`, acme.key)).body.findings.map(
        (f: { check: string }) => f.check,
      ),
    ).toEqual(['template-references']); // Reply reads "Purchase", which no longer runs before it.

    // Restore version 1: the graph as captured, labels renamed as they were then.
    const restored = await http('POST', `/api/v1/processes/version/${version.body.id}/restore`, acme.key);
    expect(restored.status).toBe(200);
    expect(restored.body.nodes).toHaveLength(5);
    expect(restored.body.edges).toHaveLength(5);
    expect(restored.body.nodes.find((node: { id: string }) => node.id === nodeId('Reply')).config.fields).toEqual({
      id: '{{input["Purchase"]["id"]}}',
    });
    expect(restored.body.versions).toEqual([version.body]);
    expect((await http('POST', `/api/v1/processes/version/${version.body.id}/restore`, globex.key)).status).toBe(404);

    // Export, import into another organization, fork.
    const exported = (await http('GET', `/api/v1/processes/${id}/export`, acme.key)).body as ProcessDocument;
    const imported = await http('POST', `/api/v1/processes/bulk-import/${globex.id}`, globex.key, exported);
    expect(imported.status).toBe(201);
    expect(imported.body).toMatchObject({
      organization_id: globex.id,
      name: 'Orders',
      created_by: 'Globex admin',
      revision: 1,
    });
    expect(imported.body.nodes.map((node: { config: unknown }) => node.config)).toEqual(
      restored.body.nodes.map((node: { config: unknown }) => node.config),
    );
    expect((await http('POST', `/api/v1/processes/${imported.body.id}/lint`, globex.key)).body.valid).toBe(true);
    const fork = await http('POST', `/api/v1/processes/fork/${id}`, acme.key, { name: 'Orders (copy)' });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({ name: 'Orders (copy)', organization_id: acme.id });

    const listed = await http('GET', `/api/v1/processes/by-org/${acme.id}?search=orders`, acme.key);
    expect(listed.body).toMatchObject({ page: 1, pageSize: 20, total: 2 });
    const history = await http('GET', `/api/v1/processes/${id}/history`, acme.key);
    expect(history.body.items.map((item: { type: string }) => item.type)).toEqual([
      'ProcessCreated',
      'NodeUpdated',
      'VersionCreated',
      'ProcessLocked',
      'ProcessStarted',
      'ProcessStopped',
      'ProcessUnlocked',
      'NodeDeleted',
      'EdgeDeleted',
      'VersionRestored',
    ]);
  });

  test('If-Match takes "7", W/"7" and 7; a stale one is a 409 naming currentRevision and changes nothing', async () => {
    const org = await organization('Revisions');
    const created = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, { name: 'Revised' });
    expect([created.status, created.body.revision, created.headers.etag]).toEqual([201, 1, '"1"']);
    const id = created.body.id as string;
    const addNode = (ifMatch: string, label: string) =>
      http(
        'POST',
        `/api/v1/processes/${id}/nodes`,
        org.key,
        { type: 'waitNode', config: { label, seconds: 1 } },
        { 'if-match': ifMatch },
      );
    const revision = async () => (await http('GET', `/api/v1/processes/by-id/${id}`, org.key)).body.revision as number;

    expect((await addNode('1', 'Bare')).status).toBe(201);
    expect(await revision()).toBe(2);
    expect((await addNode('W/"2"', 'Weak')).status).toBe(201);
    expect(await revision()).toBe(3);
    expect((await addNode('"3"', 'Quoted')).status).toBe(201);
    expect(await revision()).toBe(4);

    for (const stale of ['3', 'W/"3"', '"1"']) {
      const refused = await addNode(stale, `Stale ${stale}`);
      expect([stale, refused.status, refused.headers['content-type']]).toEqual([
        stale,
        409,
        expect.stringContaining('application/problem+json'),
      ]);
      expect(refused.body).toMatchObject({ status: 409, currentRevision: 4 });
    }
    expect((await addNode('seven', 'Bad')).status).toBe(400);
    const after = (await http('GET', `/api/v1/processes/by-id/${id}`, org.key)).body;
    expect(after.revision).toBe(4);
    expect(after.nodes.map((node: { config: { label: string } }) => node.config.label)).toEqual([
      'Bare',
      'Weak',
      'Quoted',
    ]);
  });

  test('the gateway serves every catalog route', async () => {
    // A gateway with its default routes, as main.ts starts it: each catalog route is registered.
    const dataDir = await mkdtemp(join(tmpdir(), 'weft-catalog-routes-'));
    const ownDatabase = await openDatabase({ dataDir: 'memory://' });
    const ownStore = await PostgresEventStore.open(ownDatabase);
    const ownBus = new InMemoryBus();
    const config = { ...loadConfig({ WEFT_DATA_DIR: dataDir }), bootstrapApiKey: systemKey };
    const defaults = await createGateway({ config, store: ownStore, bus: ownBus, logger: false });
    try {
      const missing = catalogRoutes.filter(
        (route) => !defaults.server.hasRoute({ method: route.method, url: route.path }),
      );
      expect(missing.map((route) => `${route.method} ${route.path}`)).toEqual([]);
    } finally {
      await defaults.close();
      await ownBus.close();
      await ownStore.close();
      await ownDatabase.close();
      await rm(dataDir, { recursive: true, force: true });
    }
    // And each route reaches the catalog through the bus: its own answer, never the gateway's "no route" or a 5xx.
    const org = await organization('Routes');
    for (const route of catalogRoutes) {
      const url = route.path.replace(/:(\w+)/g, (_, name: string) => (name === route.orgParam ? org.id : randomUUID()));
      const reply = await http(
        route.method,
        url,
        org.key,
        route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
      );
      expect([route.method, route.path, reply.status < 500, String(reply.body?.detail).startsWith('no route')]).toEqual(
        [route.method, route.path, true, false],
      );
    }
  });

  test('collections, schemas and connections answer through the gateway', async () => {
    const org = await organization('Initech');
    const collection = await http('POST', `/api/v1/process-collections/by-org/${org.id}`, org.key, {
      name: 'Ops',
      description: 'Operations',
    });
    expect(collection.status).toBe(201);
    const schema = await http('POST', `/api/v1/schemas/by-org/${org.id}`, org.key, {
      name: 'S',
      dataBlocks: [{ name: 'b', jsonSchema: { type: 'object' } }],
    });
    expect(schema.status).toBe(201);
    const badSchema = await http('POST', `/api/v1/schemas/by-org/${org.id}`, org.key, {
      name: 'S',
      dataBlocks: [{ name: 'b', jsonSchema: { type: 'nope' } }],
    });
    expect(badSchema.status).toBe(400);
    const connection = await http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'http',
      name: 'API',
      data: { token: 'super-secret-token' },
    });
    expect(connection.status).toBe(201);
    expect(JSON.stringify(connection.body)).not.toContain('super-secret-token');
    const badConnection = await http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'ftp',
      name: 'x',
      data: {},
    });
    expect(badConnection.status).toBe(400);
  });

  test('every catalog route answers through the gateway without a 5xx', async () => {
    const org = await organization('Umbrella');
    const post = (url: string, body?: unknown) => http('POST', url, org.key, body);
    const process_ = (
      await post(`/api/v1/processes/by-org/${org.id}`, {
        name: 'Smoke',
        nodes: [
          { id: 'a', type: 'inputNode', config: { label: 'A', triggerType: 'manual' } },
          { id: 'b', type: 'outputNode', config: { label: 'B' } },
        ],
        edges: [{ source_node_id: 'a', target_node_id: 'b' }],
      })
    ).body as ProcessRecord;
    const version = (await post(`/api/v1/processes/versions/${process_.id}`, { label: 'v' })).body;
    const schema = (await post(`/api/v1/schemas/by-org/${org.id}`, { name: 'S' })).body;
    const processCollection = (await post(`/api/v1/process-collections/by-org/${org.id}`, { name: 'P' })).body;
    const schemaCollection = (await post(`/api/v1/schema-collections/by-org/${org.id}`, { name: 'S' })).body;
    const connection = (await post(`/api/v1/connections/by-org/${org.id}`, { type: 'http', name: 'C', data: {} })).body;
    const exported = (await http('GET', `/api/v1/processes/${process_.id}/export`, org.key)).body;

    const bodies: Record<string, unknown> = {
      createProcess: { name: 'Another' },
      updateProcess: { description: 'smoke' },
      addNode: { type: 'waitNode', config: { label: 'W', seconds: 1 } },
      updateNode: { position: { x: 9, y: 9 } },
      addEdge: { source_node_id: process_.nodes[1]!.id, target_node_id: process_.nodes[0]!.id },
      replaceGraph: { nodes: process_.nodes, edges: process_.edges },
      importProcesses: exported,
      forkProcess: { name: 'Fork' },
      createVersion: { label: 'v2' },
      createSchema: { name: 'S2' },
      updateSchema: { name: 'S3' },
      createProcessCollection: { name: 'P2' },
      updateProcessCollection: { name: 'P3' },
      createSchemaCollection: { name: 'S2' },
      updateSchemaCollection: { name: 'S3' },
      createConnection: { type: 'http', name: 'C2', data: { token: 't' } },
    };
    const idFor = (route: (typeof catalogRoutes)[number]): string => {
      if (route.path.startsWith('/api/v1/process-collections')) return processCollection.id;
      if (route.path.startsWith('/api/v1/schema-collections')) return schemaCollection.id;
      if (route.path.startsWith('/api/v1/schemas')) return schema.id;
      if (route.path.startsWith('/api/v1/connections')) return connection.id;
      return process_.id;
    };
    // Deletes last, and whole resources after their parts, so every route still finds what it names.
    const rank = (route: (typeof catalogRoutes)[number]): number => {
      if (route.method !== 'DELETE') return 0;
      if (route.path.endsWith('/edges/:edge_id')) return 1; // before the node delete takes the edge with it
      return route.path.endsWith('/by-id/:id') ? 3 : 2;
    };
    const ordered = [...catalogRoutes].sort((a, b) => rank(a) - rank(b));
    const answers: [string, number][] = [];
    for (const route of ordered) {
      const params: Record<string, string> = {
        org_id: org.id,
        orgId: org.id,
        id: idFor(route),
        process_id: process_.id,
        version_id: version.id,
        node_id: process_.nodes[1]!.id,
        edge_id: process_.edges[0]!.id,
        pid: process_.id,
        sid: schema.id,
      };
      const url = route.path.replace(/:([a-z_A-Z]+)/g, (_match, name: string) => params[name] ?? name);
      const name = Object.entries(catalogHttpByName).find(([, spec]) => spec === route.spec)?.[0] ?? route.spec.subject;
      const reply = await http(
        route.method,
        url,
        org.key,
        route.method === 'GET' || route.method === 'DELETE' ? undefined : (bodies[name] ?? {}),
      );
      answers.push([`${route.method} ${route.path}`, reply.status]);
    }
    expect(answers.filter(([, status]) => status >= 500)).toEqual([]);
    // The OAuth consent routes need a provider's flow (oauth-code-flow.int and mail-oauth-and-files.e2e
    // run it): called bare they must refuse with a 4xx; with the resources in place every other route succeeds.
    const consentFlow = (route: string): boolean => route.includes('/connections/oauth/');
    expect(answers.filter(([route, status]) => consentFlow(route) && (status < 400 || status >= 500))).toEqual([]);
    expect(answers.filter(([route, status]) => !consentFlow(route) && status >= 300).map(([route]) => route)).toEqual(
      [],
    );
  });

  test('input the database cannot hold, or absurdly deep, is a 400 and changes nothing', async () => {
    const org = await organization('Nasty');
    const created = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, { name: 'Target' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const deep = JSON.parse(`${'{"a":'.repeat(200)}1${'}'.repeat(200)}`) as unknown;
    const refused: [string, string, unknown][] = [
      ['POST', `/api/v1/processes/by-org/${org.id}`, { name: 'nul\u0000name' }],
      ['PUT', `/api/v1/processes/by-id/${id}`, { description: 'a\u0000b' }],
      ['POST', `/api/v1/processes/${id}/nodes`, { type: 'scriptNode', config: { label: 'S', code: 'x', deep } }],
      ['POST', `/api/v1/processes/${id}/nodes`, { type: 'scriptNode', config: { 'k\u0000': 1 } }],
      ['POST', `/api/v1/schemas/by-org/${org.id}`, { name: 'S', dataBlocks: [{ name: 'b', jsonSchema: deep }] }],
      ['POST', `/api/v1/connections/by-org/${org.id}`, { type: 'http', name: 'c', data: { token: '\u0000' } }],
      ['POST', `/api/v1/process-collections/by-org/${org.id}`, { name: '\u0000' }],
    ];
    for (const [method, url, body] of refused) {
      const reply = await http(method, url, org.key, body);
      expect([url, reply.status, reply.headers['content-type']]).toEqual([
        url,
        400,
        expect.stringContaining('application/problem+json'),
      ]);
      expect(reply.body.errors.length).toBeGreaterThan(0);
    }
    const search = await http('GET', `/api/v1/processes/by-org/${org.id}?search=a%00b`, org.key);
    expect(search.status).toBe(400);
    expect(search.body.errors).toEqual([{ path: '/query/search', message: 'must not contain the NUL character' }]);

    const after = await http('GET', `/api/v1/processes/by-id/${id}`, org.key);
    expect(after.body).toMatchObject({ revision: 1, description: '', nodes: [] });
    const lists = await Promise.all(
      ['processes', 'schemas', 'connections', 'process-collections'].map((kind) =>
        http('GET', `/api/v1/${kind}/by-org/${org.id}`, org.key),
      ),
    );
    expect(lists.map((list) => list.body.total)).toEqual([1, 0, 0, 0]);
  });

  test('settings, queries and ?at= are checked before anything runs', async () => {
    const org = await organization('Strict');
    // A time-out the engine cannot arm (Node timers stop at 2^31-1 ms) and a non-http URL, listed together.
    const bad = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, {
      name: 'x',
      timeout_seconds: 1e12,
      error_webhook_url: 'ftp://example.com/hook',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((error: { path: string }) => error.path).sort()).toEqual([
      '/error_webhook_url',
      '/timeout_seconds',
    ]);
    const created = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, {
      name: 'x',
      timeout_seconds: 2_147_483,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    for (const at of ['1', '99999-01-01', 'yesterday', '2026-13-45T00:00:00Z']) {
      const reply = await http('GET', `/api/v1/processes/by-id/${id}?at=${encodeURIComponent(at)}`, org.key);
      expect([at, reply.status]).toEqual([at, 400]);
    }
    const listed = await http('GET', `/api/v1/processes/by-org/${org.id}?collectionId=abc`, org.key);
    expect(listed.status).toBe(400);
    const schemas = await http('GET', `/api/v1/schemas/by-org/${org.id}?collectionId=abc`, org.key);
    expect(schemas.status).toBe(400);
    const tree = await http('GET', `/api/v1/process-collections/by-org/${org.id}?tree=yes`, org.key);
    expect(tree.status).toBe(400);
    const parent = await http('POST', `/api/v1/process-collections/by-org/${org.id}`, org.key, {
      name: 'c',
      parentCollectionId: 'abc',
    });
    expect(parent.status).toBe(400);
    expect(parent.body.errors).toHaveLength(1);
  });

  test('a label rename rewrites every template form the engine reads; a clash names the edited node', async () => {
    const org = await organization('Rename');
    const created = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, {
      name: 'Rename',
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'Order', triggerType: 'webhook' } },
        { id: 'other', type: 'scriptNode', config: { label: 'Other', code: 'return 1' } },
        {
          id: 'out',
          type: 'outputNode',
          config: {
            label: 'Reply',
            fields: { a: '{{input["Order"]["id"]}}', b: "{{input['Order'].id}}", c: '{{ input.Order.id }}' },
          },
        },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'other' },
        { source_node_id: 'other', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const [input, other] = created.body.nodes as { id: string }[];
    const clash = await http('PUT', `/api/v1/processes/${created.body.id}/nodes/${other!.id}`, org.key, {
      config: { label: 'Order', code: 'return 1' },
    });
    expect(clash.status).toBe(400);
    expect(clash.body.errors).toEqual([
      { path: '/config/label', message: 'label "Order" is already used by another node' },
    ]);
    const renamed = await http('PUT', `/api/v1/processes/${created.body.id}/nodes/${input!.id}`, org.key, {
      config: { label: 'New order', triggerType: 'webhook' },
    });
    expect(renamed.status).toBe(200);
    const record = await http('GET', `/api/v1/processes/by-id/${created.body.id}`, org.key);
    expect(record.body.nodes[2].config.fields).toEqual({
      a: '{{input["New order"]["id"]}}',
      b: '{{input["New order"].id}}',
      c: '{{ input["New order"].id }}',
    });
    const edge = await http('POST', `/api/v1/processes/${created.body.id}/edges`, org.key, {
      source_node_id: record.body.nodes[2].id,
      target_node_id: input!.id,
      source_handle: 'nope',
    });
    expect(edge.status).toBe(400);
    // Process-form requests name fields in snake_case, in the errors and in the detail.
    expect(edge.body.errors[0].path).toBe('/source_handle');
    expect(edge.body.detail).toContain('/source_handle');
    expect(edge.body.detail).not.toContain('sourceHandle');
  });

  test('importing the same export twice reuses the schema copy; a malformed document lists every problem', async () => {
    const acme = await organization('Exporter');
    const globex = await organization('Importer');
    const schema = await http('POST', `/api/v1/schemas/by-org/${acme.id}`, acme.key, {
      name: 'Orders',
      dataBlocks: [{ name: 'order', jsonSchema: { type: 'object' } }],
    });
    const blockId = schema.body.dataBlocks[0].id as string;
    const created = await http('POST', `/api/v1/processes/by-org/${acme.id}`, acme.key, {
      name: 'With schema',
      nodes: [
        {
          id: 'in',
          type: 'inputNode',
          config: { label: 'In', triggerType: 'webhook', schemaId: schema.body.id, dataBlockId: blockId },
        },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      edges: [{ source_node_id: 'in', target_node_id: 'out' }],
    });
    const exported = await http('GET', `/api/v1/processes/${created.body.id}/export`, acme.key);
    const first = await http('POST', `/api/v1/processes/bulk-import/${globex.id}`, globex.key, exported.body);
    const second = await http('POST', `/api/v1/processes/bulk-import/${globex.id}`, globex.key, exported.body);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(first.body.nodes[0].config.schemaId).not.toBe(schema.body.id);
    expect(second.body.nodes[0].config).toEqual(first.body.nodes[0].config);
    const schemas = await http('GET', `/api/v1/schemas/by-org/${globex.id}`, globex.key);
    expect(schemas.body.total).toBe(1);
    // Once the copy is edited it is no longer what the document describes: the next import makes its own.
    await http('PUT', `/api/v1/schemas/by-id/${first.body.nodes[0].config.schemaId}`, globex.key, { name: 'Mine' });
    const third = await http('POST', `/api/v1/processes/bulk-import/${globex.id}`, globex.key, exported.body);
    expect(third.body.nodes[0].config.schemaId).not.toBe(first.body.nodes[0].config.schemaId);

    const malformed = await http('POST', `/api/v1/processes/bulk-import/${globex.id}`, globex.key, {
      name: '',
      extra: true,
      nodes: [
        { id: 'a', type: 'inputNode', config: { label: 'A', triggerType: 'manual' } },
        { id: 'b', type: 'outputNode', config: { label: 'A' } },
        { type: 5 },
      ],
      edges: [{ sourceNodeId: 'b', targetNodeId: 'zz', sourceHandle: 'nope' }],
      schemaDependencies: { S: { name: 's', dataBlocks: [{ name: 'b', jsonSchema: { type: 'bad' } }] } },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(
      [
        '/extra',
        '/name',
        '/nodes/2/type',
        '/nodes/1/config/label',
        '/edges/0/targetNodeId',
        '/edges/0/sourceHandle',
        '/schemaDependencies/S/dataBlocks/0/jsonSchema',
      ].sort(),
    );
    // Messages name nodes by their keys in the document, not by ids that were never stored.
    const handle = malformed.body.errors.find((error: { path: string }) => error.path === '/edges/0/sourceHandle');
    expect(handle.message).toContain('node "b"');
    const after = await http('GET', `/api/v1/processes/by-org/${globex.id}`, globex.key);
    expect(after.body.total).toBe(3);
  });

  test('node keys given twice are refused instead of silently merging edges', async () => {
    const org = await organization('Keys');
    const duplicate = '00000000-0000-4000-8000-00000000abcd';
    for (const id of ['a', duplicate]) {
      const reply = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, {
        name: 'dup',
        nodes: [
          { id, type: 'inputNode', config: { label: 'A', triggerType: 'manual' } },
          { id, type: 'outputNode', config: { label: 'B' } },
        ],
        edges: [{ source_node_id: id, target_node_id: id }],
      });
      expect(reply.status).toBe(400);
      expect(reply.body.errors).toEqual([{ path: '/nodes/1/id', message: `node id "${id}" is used twice` }]);
    }
    const list = await http('GET', `/api/v1/processes/by-org/${org.id}`, org.key);
    expect(list.body.total).toBe(0);
  });

  test('two collections moved under each other at once never form a loop', async () => {
    const org = await organization('Movers');
    const make = async (name: string) =>
      (await http('POST', `/api/v1/process-collections/by-org/${org.id}`, org.key, { name })).body.id as string;
    for (let round = 0; round < 5; round += 1) {
      const [x, y] = [await make(`X${round}`), await make(`Y${round}`)];
      const moves = await Promise.all([
        http('PUT', `/api/v1/process-collections/by-id/${x}`, org.key, { parentCollectionId: y }),
        http('PUT', `/api/v1/process-collections/by-id/${y}`, org.key, { parentCollectionId: x }),
      ]);
      expect(moves.map((move) => move.status).sort()).toEqual([200, 400]);
    }
    const tree = await http('GET', `/api/v1/process-collections/by-org/${org.id}?tree=true`, org.key);
    expect(tree.status).toBe(200);
    type TreeNode = { children: TreeNode[] };
    const count = (nodes: TreeNode[]): number => nodes.reduce((sum, node) => sum + 1 + count(node.children), 0);
    expect(tree.body.items).toHaveLength(5);
    expect(count(tree.body.items)).toBe(10);
  });

  test('views, renames and member changes of one collection at once all succeed', async () => {
    const org = await organization('Busy');
    const collection = await http('POST', `/api/v1/process-collections/by-org/${org.id}`, org.key, { name: 'Busy' });
    const processes = await Promise.all(
      [1, 2, 3].map(
        async (n) => (await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, { name: `P${n}` })).body.id,
      ),
    );
    const base = `/api/v1/process-collections`;
    const replies = await Promise.all([
      ...[1, 2, 3, 4].map(() => http('GET', `${base}/by-id/${collection.body.id}`, org.key)),
      http('PUT', `${base}/by-id/${collection.body.id}`, org.key, { name: 'Renamed' }),
      ...processes.map((pid) => http('POST', `${base}/${collection.body.id}/add-process/${pid}`, org.key)),
    ]);
    expect(replies.map((reply) => (reply.status === 200 ? 200 : reply.body))).toEqual([
      200, 200, 200, 200, 200, 200, 200, 200,
    ]);
    const after = await http('GET', `${base}/by-id/${collection.body.id}`, org.key);
    expect(after.body.name).toBe('Renamed');
    expect(after.body.members).toHaveLength(3);
  });
});
