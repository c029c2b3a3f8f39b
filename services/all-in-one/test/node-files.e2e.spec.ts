import { createServer, type Server } from 'node:http';
import { LocalDiskBlobStorage } from '@weft/blob-storage';
import type { RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client, removeDir, startEmbedded, tempDataDir } from './weft-harness.js';

/** Files an integration node receives become blob references in the configured storage. */
describe('node files as blob references (embedded: local disk)', () => {
  const bytes = Buffer.from([0, 1, 2, 3, 250, 251, 252, 253, 254, 255]);
  let server: Server;
  let fileUrl: string;
  let weft: RunningWeft;
  let dataDir: string;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      response.end(bytes);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fileUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/report.bin`;
    dataDir = await tempDataDir();
    weft = await startEmbedded(dataDir, { WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
  });
  afterAll(async () => {
    await weft?.stop();
    await new Promise((resolve) => server.close(resolve));
    await removeDir(dataDir);
  });

  test('a binary HTTP response is stored as a blob and the output carries {name, url, size, contentType}', async () => {
    const call = client(weft.url, BOOTSTRAP_KEY);
    const org = await call('POST', '/api/v1/organizations', { name: 'Files' });
    const created = await call('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'download',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'get',
          type: 'integrationNode',
          position: { x: 1, y: 0 },
          config: { label: 'Download', method: 'GET', url: fileUrl },
        },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'get' },
        { source_node_id: 'get', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const run = await call('POST', `/api/v1/processes/test/${created.body.id}`, {});
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('completed');
    const download = run.body.node_states.find((state: { node_name: string }) => state.node_name === 'Download');
    const file = download.output_data.body.files[0];
    expect(file).toMatchObject({ name: 'report.bin', size: bytes.length, contentType: 'application/octet-stream' });
    expect(file.url).toMatch(/^weft-blob:\/\//);
    const storage = new LocalDiskBlobStorage(dataDir);
    expect(await storage.getBuffer(file.url)).toEqual(bytes);
    await storage.close();
  });
});
