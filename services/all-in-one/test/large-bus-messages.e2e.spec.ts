import { loadConfig } from '@weft/config';
import { startWeft, type RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client, removeDir, tempDataDir } from './weft-harness.js';
import { createTestDatabase, startNatsServer, type TestDatabase, type TestNatsServer } from '@weft/test-support';

/**
 * Distributed Weft over a nats-server with its default max_payload (1 MB): an execution record and
 * a request body larger than that still go between the gateway and the engine (the bus chunks
 * them), where they used to hang until the gateway's timeout or fail.
 */
const OUTPUT_CHARS = 1_500_000;
const BODY_CHARS = 2 * 1024 * 1024;

describe('messages larger than NATS max_payload (distributed)', () => {
  let weft: RunningWeft;
  let dataDir: string;
  let nats: TestNatsServer;
  let database: TestDatabase;
  let call: ReturnType<typeof client>;
  let processId: string;

  beforeAll(async () => {
    dataDir = await tempDataDir();
    nats = await startNatsServer();
    database = await createTestDatabase('weft_large_bus');
    weft = await startWeft(
      loadConfig({
        WEFT_PORT: '0',
        WEFT_HOST: '127.0.0.1',
        WEFT_DATA_DIR: dataDir,
        WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
        WEFT_LOG_LEVEL: 'fatal',
        WEFT_NATS_URL: nats.url,
        WEFT_DATABASE_URL: database.url,
      }),
    );
    call = client(weft.url, BOOTSTRAP_KEY);
    const org = await call('POST', '/api/v1/organizations', { name: 'Large messages' });
    expect(org.status).toBe(201);
    const created = await call('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'large output',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'big',
          type: 'scriptNode',
          position: { x: 1, y: 0 },
          config: {
            label: 'Big',
            code: `return { text: 'x'.repeat(${OUTPUT_CHARS}), got: String(input.In.text ?? '').length };`,
          },
        },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out', returnToClient: true } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'big' },
        { source_node_id: 'big', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    processId = created.body.id;
  }, 60_000);

  afterAll(async () => {
    await weft?.stop();
    await nats?.stop();
    await database?.drop();
    await removeDir(dataDir);
  });

  test('a test run whose script outputs 1.5 MB answers 200 with the whole record, and the record reads back', async () => {
    const run = await call('POST', `/api/v1/processes/test/${processId}`, { text: 'small' });
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('completed');
    const bigState = run.body.node_states.find((state: { node_name: string }) => state.node_name === 'Big');
    expect(bigState.output_data).toEqual({ text: 'x'.repeat(OUTPUT_CHARS), got: 5 });

    const read = await call('GET', `/api/v1/processes/execution/${run.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(run.body.id);
    expect(read.body.node_states).toEqual(run.body.node_states);
  }, 120_000);

  test('a 2 MB JSON body reaches the engine', async () => {
    const run = await call('POST', `/api/v1/processes/test/${processId}`, { text: 'y'.repeat(BODY_CHARS) });
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('completed');
    const bigState = run.body.node_states.find((state: { node_name: string }) => state.node_name === 'Big');
    expect(bigState.output_data.got).toBe(BODY_CHARS);
  }, 120_000);
});
