import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '@weft/config';
import { createBlobStorage } from '@weft/blob-storage';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

/** The webhook trigger as a caller uses it, through the gateway, on both deployments (docs/triggers.md). */
describe(`webhook trigger (${deploymentKind()})`, () => {
  let under: Deployment;
  let org: { id: string; key: string };
  let otherKey: string;
  let syncProcess: string;
  let asyncProcess: string;
  let failing: string;
  let validated: string;

  const as = (key: string) => client(under.baseUrl, key);

  const createProcess = async (name: string, nodes: unknown[], edges: unknown[]): Promise<string> => {
    const created = await as(org.key)('POST', `/api/v1/processes/by-org/${org.id}`, { name, nodes, edges });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const start = async (id: string) =>
    expect((await as(org.key)('POST', `/api/v1/processes/start/${id}`)).status).toBe(200);
  const webhookIn = (extra: Record<string, unknown> = {}) => ({
    id: 'in',
    type: 'inputNode',
    config: { label: 'In', triggerType: 'webhook', ...extra },
  });
  const chain = [
    { source_node_id: 'in', target_node_id: 'mid' },
    { source_node_id: 'mid', target_node_id: 'out' },
  ];

  beforeAll(async () => {
    under = await startDeployment({ env: { WEFT_WEBHOOK_FILE_MAX_BYTES: '1024' } });
    const system = under.call;
    const created = await system('POST', '/api/v1/organizations', { name: 'Acme' });
    const key = await system('POST', `/api/v1/api-keys/by-org/${created.body.id}`, {
      name: 'k',
      userName: 'Ann',
      userId: randomUUID(),
    });
    org = { id: created.body.id, key: key.body.key };
    const doubledField = { doubled: '{{input["Double"]["doubled"]}}' };
    const double = {
      id: 'mid',
      type: 'scriptNode',
      config: { label: 'Double', code: 'return { doubled: input.In.n * 2 };' },
    };
    syncProcess = await createProcess(
      'Sync',
      [
        webhookIn(),
        double,
        { id: 'out', type: 'outputNode', config: { label: 'Out', returnToClient: true, fields: doubledField } },
      ],
      chain,
    );
    asyncProcess = await createProcess(
      'Async',
      [webhookIn(), double, { id: 'out', type: 'outputNode', config: { label: 'Out' } }],
      chain,
    );
    failing = await createProcess(
      'Failing',
      [
        webhookIn(),
        { id: 'mid', type: 'scriptNode', config: { label: 'Boom', code: 'throw new Error("boom");' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out', returnToClient: true } },
      ],
      chain,
    );
    const schema = await as(org.key)('POST', `/api/v1/schemas/by-org/${org.id}`, {
      name: 'Order',
      dataBlocks: [
        {
          name: 'order',
          jsonSchema: {
            type: 'object',
            required: ['sku', 'qty'],
            properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } },
          },
        },
      ],
    });
    expect(schema.status).toBe(201);
    validated = await createProcess(
      'Validated',
      [
        webhookIn({ schemaId: schema.body.id, dataBlockId: schema.body.dataBlocks[0].id }),
        {
          id: 'out',
          type: 'outputNode',
          config: { label: 'Out', returnToClient: true, fields: { got: '{{input["In"]}}' } },
        },
      ],
      [{ source_node_id: 'in', target_node_id: 'out' }],
    );
    for (const id of [syncProcess, asyncProcess, failing, validated]) await start(id);
    const restricted = await system('POST', `/api/v1/api-keys/by-org/${org.id}`, {
      name: 'only async',
      userName: 'Rita',
      userId: randomUUID(),
      processIds: [asyncProcess],
    });
    otherKey = restricted.body.key;
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await under?.stop();
  });

  const hook = (id: string, query = '') => `/api/v1/processes/${id}/webhook${query}`;

  test('with Return to Client the caller gets that node output; without it 202 and the run goes on', async () => {
    const sync = await as(org.key)('POST', hook(syncProcess), { n: 21 });
    expect(sync).toMatchObject({ status: 200, body: { doubled: 42 } });
    const queued = await as(org.key)('POST', hook(asyncProcess), { n: 2 });
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ execution_id: expect.any(String), status: 'running' });
    let record;
    for (let tries = 0; tries < 100; tries += 1) {
      record = await as(org.key)('GET', `/api/v1/processes/execution/${queued.body.execution_id}`);
      if (record.status === 200 && record.body.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const process = await as(org.key)('GET', `/api/v1/processes/by-id/${asyncProcess}`);
    const inputNodeId = process.body.nodes.find((node: { type: string }) => node.type === 'inputNode').id;
    expect(record?.body).toMatchObject({ status: 'completed', trigger_node_id: inputNodeId, input_data: { n: 2 } });
  });

  test('a failed synchronous run answers problem+json carrying execution_id; past the wait 202', async () => {
    const failed = await as(org.key)('POST', hook(failing), { n: 1 });
    expect(failed.status).toBe(500);
    expect(failed.contentType).toContain('application/problem+json');
    expect(failed.body).toMatchObject({ execution_id: expect.any(String), execution_status: 'failed' });
    const slow = await createProcess(
      'Slow',
      [
        webhookIn(),
        { id: 'mid', type: 'waitNode', config: { label: 'Pause', seconds: 30 } },
        { id: 'out', type: 'outputNode', config: { label: 'Out', returnToClient: true } },
      ],
      chain,
    );
    await start(slow);
    const timedOut = await as(org.key)('POST', hook(slow, '?waitSeconds=0'), {});
    expect(timedOut.status).toBe(202);
    expect(timedOut.body).toEqual({ execution_id: expect.any(String), status: 'running' });
  });

  test('text/plain arrives as {text}, multipart files are stored as references, other types get 415', async () => {
    const text = await as(org.key)('POST', hook(asyncProcess), 'hello', {
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(202);
    const echo = await createProcess(
      'Echo',
      [
        webhookIn(),
        {
          id: 'out',
          type: 'outputNode',
          config: { label: 'Out', returnToClient: true, fields: { got: '{{input["In"]}}' } },
        },
      ],
      [{ source_node_id: 'in', target_node_id: 'out' }],
    );
    await start(echo);
    const plain = await as(org.key)('POST', hook(echo), 'hello there', { 'content-type': 'text/plain' });
    expect(plain).toMatchObject({ status: 200, body: { got: { text: 'hello there' } } });

    const form = new FormData();
    form.append('customer', 'Ann');
    form.append('invoice', new Blob([Buffer.from('%PDF-1.7 invoice')], { type: 'application/pdf' }), 'invoice.pdf');
    const response = await fetch(`${under.baseUrl}${hook(echo)}`, {
      method: 'POST',
      headers: { 'x-api-key': org.key },
      body: form,
    });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as {
      got: { customer: string; invoice: { name: string; url: string; size: number; contentType: string } };
    };
    const body = answer.got;
    expect(body).toMatchObject({
      customer: 'Ann',
      invoice: {
        name: 'invoice.pdf',
        size: 16,
        contentType: 'application/pdf',
        url: expect.stringMatching(/^weft-blob:\/\//),
      },
    });
    const blobs = createBlobStorage(loadConfig({ WEFT_DATA_DIR: under.dataDir! }));
    expect((await blobs.getBuffer(body.invoice.url)).toString()).toBe('%PDF-1.7 invoice');
    await blobs.close();

    const xml = await as(org.key)('POST', hook(echo), '<a/>', { 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expect(xml.contentType).toContain('application/problem+json');
  });

  test('uploads of a refused request are deleted; a file over the limit is 413; other routes refuse multipart', async () => {
    // Each stored blob is <hash> and <hash>.json on the local disk.
    const blobFiles = async (): Promise<number> =>
      (await readdir(join(under.dataDir!, 'blobs'), { recursive: true }).catch(() => [])).filter((name) =>
        name.endsWith('.json'),
      ).length;
    const upload = (path: string, size: number) => {
      const form = new FormData();
      form.append('note', 'x');
      form.append('file', new Blob([Buffer.alloc(size, 1)], { type: 'application/octet-stream' }), 'data.bin');
      return fetch(`${under.baseUrl}${path}`, { method: 'POST', headers: { 'x-api-key': org.key }, body: form });
    };
    const stopped = await createProcess(
      'Never started',
      [webhookIn(), { id: 'out', type: 'outputNode', config: { label: 'Out' } }],
      [{ source_node_id: 'in', target_node_id: 'out' }],
    );
    const before = await blobFiles();
    expect((await upload(hook(stopped), 100)).status).toBe(409);
    expect((await upload(hook(asyncProcess), 2048)).status).toBe(413);
    // Form fields are held in memory: together they may not pass the body limit (5 MiB here).
    const fields = new FormData();
    for (const name of ['a', 'b']) fields.append(name, 'x'.repeat(3 * 1024 * 1024));
    const tooMuch = await fetch(`${under.baseUrl}${hook(asyncProcess)}`, {
      method: 'POST',
      headers: { 'x-api-key': org.key },
      body: fields,
    });
    expect(tooMuch.status).toBe(413);
    expect(await blobFiles()).toBe(before);
    const elsewhere = await upload(`/api/v1/processes/test/${asyncProcess}`, 10);
    expect(elsewhere.status).toBe(415);
  });

  test('a payload violating the data block schema is a 400 listing every violation, and starts nothing', async () => {
    const before = await as(org.key)('GET', `/api/v1/processes/executions/${validated}`);
    const bad = await as(org.key)('POST', hook(validated), { qty: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        { path: '/body/sku', message: 'is required' },
        expect.objectContaining({ path: '/body/qty' }),
      ]),
    );
    const after = await as(org.key)('GET', `/api/v1/processes/executions/${validated}`);
    expect(after.body.total).toBe(before.body.total);
    const good = await as(org.key)('POST', hook(validated), { sku: 'A-1', qty: 2 });
    expect(good).toMatchObject({ status: 200, body: { got: { sku: 'A-1', qty: 2 } } });
  });

  test('a key restricted to other processes gets 403; a stopped process 409', async () => {
    expect((await as(otherKey)('POST', hook(syncProcess), { n: 1 })).status).toBe(403);
    expect((await as(otherKey)('POST', hook(asyncProcess), { n: 1 })).status).toBe(202);
    const stopped = await createProcess(
      'Stopped',
      [webhookIn(), { id: 'out', type: 'outputNode', config: { label: 'Out' } }],
      [{ source_node_id: 'in', target_node_id: 'out' }],
    );
    const refused = await as(org.key)('POST', hook(stopped), { n: 1 });
    expect(refused.status).toBe(409);
    await start(stopped);
    expect((await as(org.key)('POST', hook(stopped), { n: 1 })).status).toBe(202);
    expect((await as(org.key)('POST', `/api/v1/processes/stop/${stopped}`)).status).toBe(200);
    expect((await as(org.key)('POST', hook(stopped), { n: 1 })).status).toBe(409);
  });

  test('with several webhook input nodes ?inputNodeId picks one; without it the answer is 400', async () => {
    const two = await createProcess(
      'Two hooks',
      [
        webhookIn(),
        { id: 'in2', type: 'inputNode', config: { label: 'Other', triggerType: 'webhook' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      [
        { source_node_id: 'in', target_node_id: 'out' },
        { source_node_id: 'in2', target_node_id: 'out' },
      ],
    );
    await start(two);
    const unchosen = await as(org.key)('POST', hook(two), { n: 1 });
    expect(unchosen.status).toBe(400);
    expect(unchosen.body.errors[0].path).toBe('/query/inputNodeId');
    const process = await as(org.key)('GET', `/api/v1/processes/by-id/${two}`);
    const other = (process.body.nodes as { id: string; config: { label: string } }[]).find(
      (node) => node.config.label === 'Other',
    )!.id;
    const chosen = await as(org.key)('POST', hook(two, `?inputNodeId=${other}`), { n: 2 });
    expect(chosen.status).toBe(202);
    let record = await as(org.key)('GET', `/api/v1/processes/execution/${chosen.body.execution_id}`);
    for (let tries = 0; tries < 100 && record.status !== 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      record = await as(org.key)('GET', `/api/v1/processes/execution/${chosen.body.execution_id}`);
    }
    expect(record.body.trigger_node_id).toBe(other);
  });

  test('the same Idempotency-Key twice starts one execution and answers the same', async () => {
    const key = randomUUID();
    const first = await as(org.key)('POST', hook(syncProcess), { n: 5 }, { 'idempotency-key': key });
    const second = await as(org.key)('POST', hook(syncProcess), { n: 5 }, { 'idempotency-key': key });
    expect(first).toMatchObject({ status: 200, body: { doubled: 10 } });
    expect(second.body).toEqual(first.body);
    const queuedKey = randomUUID();
    const a = await as(org.key)('POST', hook(asyncProcess), { n: 1 }, { 'idempotency-key': queuedKey });
    const b = await as(org.key)('POST', hook(asyncProcess), { n: 1 }, { 'idempotency-key': queuedKey });
    expect(b.body.execution_id).toBe(a.body.execution_id);
  });

  test('the listeners endpoint shows each input node of a running process', async () => {
    const listed = await as(org.key)('GET', `/api/v1/processes/${syncProcess}/listeners`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({
      process_id: syncProcess,
      is_running: true,
      listeners: [
        { node_id: expect.any(String), label: 'In', trigger_type: 'webhook', state: 'listening', last_error: null },
      ],
    });
  });
});
