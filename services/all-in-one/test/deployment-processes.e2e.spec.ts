import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { client } from './weft-harness.js';

/**
 * Distributed mode as deployed: the gateway, the process catalog and two engine replicas, each its
 * own process from its built dist/main.js, over a NATS server of this test's own (so no other
 * test's streams are shared) and a fresh PostgreSQL database.
 */
const root = resolve(__dirname, '../../..');
const mains = {
  gateway: join(root, 'services/gateway/dist/main.js'),
  catalog: join(root, 'services/process-catalog/dist/main.js'),
  engine: join(root, 'services/engine/dist/main.js'),
};
const adminUrl = process.env.WEFT_TEST_DATABASE_URL ?? '';
// scripts/run-tests.sh sets it; without it the suite fails instead of testing against a guess.
if (!adminUrl) throw new Error('WEFT_TEST_DATABASE_URL is not set (run the tests through scripts/run-tests.sh)');
const KEY = 'weft_distributed_test_key_0123456789';

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

async function waitFor(
  check: () => Promise<boolean>,
  what: string | (() => string),
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
}

describe('distributed mode: every service its own process over NATS and PostgreSQL', () => {
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  let dataDir: string;
  let databaseName: string;
  let baseUrl: string;

  const start = (name: string, file: string, env: Record<string, string>): ChildProcess => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: 'pipe' });
    child.stdout?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    child.stderr?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    children.push(child);
    return child;
  };

  beforeAll(async () => {
    for (const file of Object.values(mains)) {
      if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm build\` before the e2e tests`);
    }
    dataDir = await mkdtemp(join(tmpdir(), 'weft-dist-'));
    const natsPort = await freePort();
    const nats = spawn(
      'nats-server',
      ['-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', join(dataDir, 'nats')],
      { stdio: 'ignore' },
    );
    nats.on('error', (error) => logs.push(`nats-server could not start: ${error.message}`));
    children.push(nats);
    databaseName = `weft_dist_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${databaseName}`);
    await admin.end();
    const httpPort = await freePort();
    const env = {
      WEFT_DATABASE_URL: adminUrl.replace(/\/[^/]*$/, `/${databaseName}`),
      WEFT_NATS_URL: `nats://127.0.0.1:${natsPort}`,
      WEFT_SECRET_KEY: 'distributed-test-secret-key-0123456789',
      WEFT_BOOTSTRAP_API_KEY: KEY,
      WEFT_DATA_DIR: dataDir,
      WEFT_LOG_LEVEL: 'warn',
    };
    await waitFor(
      async () => {
        const { createConnection } = await import('node:net');
        return new Promise<boolean>((done) => {
          const socket = createConnection(natsPort, '127.0.0.1', () => (socket.end(), done(true)));
          socket.on('error', () => done(false));
        });
      },
      () => `nats-server ${logs.join(' ')}`,
    );
    // The catalog first: it migrates its tables; then two engines and the gateway.
    start('catalog', mains.catalog, env);
    start('engine-1', mains.engine, env);
    start('engine-2', mains.engine, env);
    start('gateway', mains.gateway, { ...env, WEFT_PORT: String(httpPort), WEFT_HOST: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${httpPort}`;
    await waitFor(
      async () => (await fetch(`${baseUrl}/readyz`)).status === 200,
      () => `the gateway to be ready; service output:\n${logs.join('')}`,
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of children.reverse()) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a process created through the gateway runs on an engine replica and shows in its history', async () => {
    const system = client(baseUrl, KEY);
    const org = await system('POST', '/api/v1/organizations', { name: 'Distributed' });
    expect(org.status).toBe(201);
    // The gateway is ready before the catalog and engines have subscribed: wait for them to answer.
    await waitFor(
      async () => (await system('GET', `/api/v1/processes/by-org/${org.body.id}`)).status === 200,
      'the catalog',
    );
    await waitFor(
      async () => (await system('GET', `/api/v1/processes/executions/${org.body.id}`)).status !== 503,
      'the engines',
    );
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'double',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'dbl',
          type: 'scriptNode',
          position: { x: 1, y: 0 },
          config: { label: 'Double', code: 'return { v: input.In.n * 2 };' },
        },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'dbl' },
        { source_node_id: 'dbl', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const results = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) => system('POST', `/api/v1/processes/test/${created.body.id}`, { n })),
    );
    for (const [index, run] of results.entries()) {
      expect(run.status).toBe(200);
      expect(run.body.status).toBe('completed');
      expect(run.body.output_data.Out.Double).toEqual({ v: (index + 1) * 2 });
    }
    const history = await system('GET', `/api/v1/processes/executions/${created.body.id}`);
    expect(history.body.total).toBe(6);
  }, 60_000);
});
