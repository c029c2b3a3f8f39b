import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { blobKeyOf, filesUrlOf } from '@weft/blob-storage';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, type Deployment } from './support/deployment.js';
import { useSharedDeployment } from './support/shared-deployment.js';

/**
 * Files an integration node receives become blob references in the configured storage, under the
 * organization that ran the node: its keys download them, other organizations' nodes and keys
 * never see them.
 */
describe(`node files as blob references (${deploymentKind()})`, () => {
  const bytes = Buffer.from([0, 1, 2, 3, 250, 251, 252, 253, 254, 255]);
  let server: Server;
  let fileUrl: string;
  let weft: Deployment;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fileUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/report.bin`;
    weft = await useSharedDeployment();
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await weft?.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A new organization and an unrestricted key of it. */
  const organization = async (name: string) => {
    const system = weft.call;
    const org = await system('POST', '/api/v1/organizations', { name });
    const issued = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: 'user',
      userName: `${name} user`,
      userId: randomUUID(),
    });
    expect(issued.status).toBe(201);
    const key = issued.body.key as string;
    return { id: org.body.id as string, key, call: client(weft.baseUrl, key) };
  };

  /** Runs In -> <node> -> Out as a test execution of `org` and returns the execution record. */
  const runOne = async (
    org: { id: string; call: ReturnType<typeof client> },
    node: { type: string; config: Record<string, unknown> },
  ) => {
    const created = await org.call('POST', `/api/v1/processes/by-org/${org.id}`, {
      name: randomUUID(),
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        { id: 'step', type: node.type, position: { x: 1, y: 0 }, config: node.config },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'step' },
        { source_node_id: 'step', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const run = await org.call('POST', `/api/v1/processes/test/${created.body.id}`, {});
    expect(run.status).toBe(200);
    return run.body as {
      status: string;
      error_message: string | null;
      node_states: { node_name: string; output_data: any }[];
    };
  };

  test('a binary HTTP response is stored under its organization; only that organization reads or downloads it', async () => {
    const owner = await organization('Files');
    const other = await organization('Other files');
    const run = await runOne(owner, {
      type: 'integrationNode',
      config: { label: 'Download', method: 'GET', url: fileUrl },
    });
    expect(run.status).toBe('completed');
    const file = run.node_states.find((state) => state.node_name === 'Download')!.output_data.body.files[0];
    expect(file).toMatchObject({ name: 'report.bin', size: bytes.length, contentType: 'application/octet-stream' });
    expect(file.url).toMatch(/^weft-blob:\/\//);
    const key = blobKeyOf(file.url);
    expect(key.startsWith(`${owner.id}/`)).toBe(true);
    // The owner downloads it by the key its url names; another organization gets 404.
    const download = await fetch(`${weft.baseUrl}${filesUrlOf(key)}`, { headers: { 'x-api-key': owner.key } });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
    expect((await other.call('GET', filesUrlOf(key))).status).toBe(404);

    // Another organization's node given the leaked reference fails without reading it.
    const stolen = await runOne(other, { type: 'ocrNode', config: { label: 'Scan', file } });
    expect(stolen).toMatchObject({
      status: 'failed',
      error_message: expect.stringContaining('file "report.bin" not found'),
    });
  });
});
