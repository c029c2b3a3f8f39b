import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startAuthorizedNats, type AuthorizedNats } from '../../../libs/runtime/test/support/authorized-nats-server.js';
import { client } from '../../all-in-one/test/weft-harness.js';
import { createTestDatabase, freePort, type TestDatabase } from '@weft/test-support';
import { readUntil } from './support/testing-stack.js';

/**
 * The testing service as deployed: its own built process logged in as the NATS user `testing`
 * (infra/nats/auth.conf), beside the gateway, catalog and engine processes. Its runs reach the
 * engine's queue, the catalog reaches it for exports, all within the generated permissions.
 */
const root = resolve(__dirname, '../../..');
const mains = {
  gateway: join(root, 'services/gateway/dist/main.js'),
  catalog: join(root, 'services/process-catalog/dist/main.js'),
  engine: join(root, 'services/engine/dist/main.js'),
  testing: join(root, 'services/testing/dist/main.js'),
};
const KEY = 'weft_testing_process_e2e_key_0123456789';

describe('the testing service as its own process under its NATS user', () => {
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  let nats: AuthorizedNats;
  let dataDir: string;
  let database: TestDatabase;
  let baseUrl: string;

  const started: Record<string, ChildProcess> = {};
  const start = (name: string, file: string, env: Record<string, string>): void => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: 'pipe' });
    child.stdout?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    child.stderr?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    children.push(child);
    started[name] = child;
  };

  beforeAll(async () => {
    for (const file of Object.values(mains)) {
      if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm build\` before the e2e tests`);
    }
    dataDir = await mkdtemp(join(tmpdir(), 'weft-testing-process-'));
    nats = await startAuthorizedNats();
    database = await createTestDatabase('weft_testing_proc');
    const httpPort = await freePort();
    const env = {
      WEFT_DATABASE_URL: database.url,
      WEFT_SECRET_KEY: 'testing-process-e2e-secret-key-0123456789',
      WEFT_BOOTSTRAP_API_KEY: KEY,
      WEFT_DATA_DIR: dataDir,
      WEFT_LOG_LEVEL: 'warn',
    };
    start('catalog', mains.catalog, { ...env, ...nats.envFor('process-catalog') });
    start('engine', mains.engine, { ...env, ...nats.envFor('engine') });
    start('testing', mains.testing, { ...env, ...nats.envFor('testing') });
    start('gateway', mains.gateway, {
      ...env,
      ...nats.envFor('gateway'),
      WEFT_PORT: String(httpPort),
      WEFT_HOST: '127.0.0.1',
    });
    baseUrl = `http://127.0.0.1:${httpPort}`;
    await readUntil(
      () =>
        fetch(`${baseUrl}/readyz`).then(
          (response) => response.status,
          () => 0,
        ),
      (status) => status === 200,
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of children.reverse()) child.kill('SIGTERM');
    for (const child of children) {
      if (child.exitCode === null) await new Promise((done) => child.once('exit', done));
    }
    await nats?.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a test case runs through the engine, exports with its process and runs in a batch', async () => {
    const system = client(baseUrl, KEY);
    const org = await system('POST', '/api/v1/organizations', { name: 'Separate' });
    // Every service answers once it has subscribed; the gateway may be ready first.
    await readUntil(
      () => system('GET', `/api/v1/processes/by-org/${org.body.id}`),
      (answer) => answer.status === 200,
    );
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'Own process',
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out', fields: { n: '{{input["In"]["n"]}}' } } },
      ],
      edges: [{ source_node_id: 'in', target_node_id: 'out' }],
    });
    const processId = created.body.id as string;
    const inputNodeId = (created.body.nodes as { id: string; type: string }[]).find(
      (node) => node.type === 'inputNode',
    )!.id;
    const testCase = await readUntil(
      () =>
        system('POST', `/api/v1/test-cases/by-process/${processId}`, {
          name: 'n is small',
          inputNodeId,
          inputData: { n: 3 },
          expectedOutputSchema: { properties: { Out: { properties: { n: { maximum: 5 } } } } },
        }),
      (answer) => answer.status !== 503,
    );
    expect(testCase.status).toBe(201);
    // The engine, a process of its own, may subscribe after the catalog and the testing service.
    await readUntil(
      () => system('GET', `/api/v1/processes/execution-stats/${processId}`),
      (answer) => answer.status === 200,
    );
    const run = await system('POST', `/api/v1/test-execution/${testCase.body.id}/run`);
    expect(run.body).toMatchObject({ status: 'passed', actualOutput: { Out: { n: 3 } }, errorMessage: null });
    const exported = await system('GET', `/api/v1/processes/${processId}/export`);
    expect(exported.body.testCases).toEqual([expect.objectContaining({ name: 'n is small', inputNodeId })]);
    const batch = await system('POST', '/api/v1/test-runs/batch', { processId });
    expect(batch.body).toMatchObject({ status: 'completed', total: 1, stats: { passed: 1 } });
    expect(logs.join('')).not.toMatch(/Permissions Violation/i);
  });

  test('without a testing service: export and fork still work, an import carrying test cases is refused unchanged', async () => {
    const system = client(baseUrl, KEY);
    const org = await system('POST', '/api/v1/organizations', { name: 'No testing' });
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'Alone',
      nodes: [{ id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } }],
      edges: [],
    });
    const testing = started.testing!;
    testing.kill('SIGTERM');
    if (testing.exitCode === null) await new Promise((done) => testing.once('exit', done));
    const exported = await system('GET', `/api/v1/processes/${created.body.id}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body).not.toHaveProperty('testCases');
    expect((await system('POST', `/api/v1/processes/fork/${created.body.id}`, { name: 'Fork' })).status).toBe(201);
    const count = async () => (await system('GET', `/api/v1/processes/by-org/${org.body.id}`)).body.total as number;
    const before = await count();
    const refused = await system('POST', `/api/v1/processes/bulk-import/${org.body.id}`, {
      ...exported.body,
      testCases: [{ name: 'carried', inputNodeId: exported.body.nodes[0].id }],
    });
    expect(refused.status).toBe(503);
    expect(await count()).toBe(before);
  });
});
