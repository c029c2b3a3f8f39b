import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { NatsBus } from '@weft/bus';
import type { PublishedEventEnvelope } from '@weft/contracts';
import { startAuthorizedNats, type AuthorizedNats } from '../../../libs/runtime/test/support/authorized-nats-server.js';
import { client } from './weft-harness.js';

/**
 * Distributed mode under the NATS users and permissions docker-compose runs (infra/nats/auth.conf):
 * the gateway, the catalog and the engine, each its own built process logged in as its own user,
 * serve a process whose HTTP node authenticates with a stored connection (the engine asks the
 * catalog for the secret), and an outside subscriber reads the execution's events from WEFT_EVENTS.
 */
const root = resolve(__dirname, '../../..');
const mains = {
  gateway: join(root, 'services/gateway/dist/main.js'),
  catalog: join(root, 'services/process-catalog/dist/main.js'),
  engine: join(root, 'services/engine/dist/main.js'),
};
const adminUrl = process.env.WEFT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/weft_test';
const KEY = 'weft_nats_auth_e2e_key_0123456789';
const TOKEN = 'connection-secret-token';

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

async function waitFor(check: () => Promise<boolean>, what: () => string, attempts = 150): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    if (await check().catch(() => false)) return;
    await new Promise((wake) => setTimeout(wake, 200));
  }
  throw new Error(`gave up waiting for ${what()}`);
}

describe('distributed mode with a NATS user per service (infra/nats/auth.conf)', () => {
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  let nats: AuthorizedNats;
  let subscriber: NatsBus | undefined;
  let dataDir: string;
  let databaseName: string;
  let baseUrl: string;
  let api: Server;
  let apiUrl: string;
  const tokensSeen: Array<string | undefined> = [];

  const start = (name: string, file: string, env: Record<string, string>): void => {
    const child = spawn(process.execPath, [file], { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: 'pipe' });
    child.stdout?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    child.stderr?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    children.push(child);
  };

  beforeAll(async () => {
    for (const file of Object.values(mains)) {
      if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm build\` before the e2e tests`);
    }
    dataDir = await mkdtemp(join(tmpdir(), 'weft-nats-auth-e2e-'));
    // The API the process calls: it answers only a caller holding the connection's token.
    api = createHttpServer((request, response) => {
      tokensSeen.push(request.headers.authorization);
      const authorized = request.headers.authorization === `Bearer ${TOKEN}`;
      response.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ authorized }));
    });
    await new Promise<void>((listening) => api.listen(0, '127.0.0.1', listening));
    apiUrl = `http://127.0.0.1:${(api.address() as { port: number }).port}/whoami`;
    nats = await startAuthorizedNats();
    databaseName = `weft_nats_auth_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${databaseName}`);
    await admin.end();
    const httpPort = await freePort();
    const env = {
      WEFT_DATABASE_URL: adminUrl.replace(/\/[^/]*$/, `/${databaseName}`),
      WEFT_SECRET_KEY: 'nats-auth-e2e-secret-key-0123456789',
      WEFT_BOOTSTRAP_API_KEY: KEY,
      WEFT_DATA_DIR: dataDir,
      WEFT_LOG_LEVEL: 'warn',
    };
    start('catalog', mains.catalog, { ...env, ...nats.envFor('process-catalog') });
    start('engine', mains.engine, { ...env, ...nats.envFor('engine') });
    start('gateway', mains.gateway, {
      ...env,
      ...nats.envFor('gateway'),
      WEFT_PORT: String(httpPort),
      WEFT_HOST: '127.0.0.1',
    });
    baseUrl = `http://127.0.0.1:${httpPort}`;
    await waitFor(
      async () => (await fetch(`${baseUrl}/readyz`)).status === 200,
      () => `the gateway to be ready; service output:\n${logs.join('')}`,
    );
  }, 60_000);

  afterAll(async () => {
    await subscriber?.close();
    for (const child of children.reverse()) child.kill('SIGTERM');
    await Promise.all(
      children.map((child) =>
        child.exitCode === null ? new Promise((done) => child.once('exit', done)) : Promise.resolve(),
      ),
    );
    await nats?.stop();
    await new Promise((closed) => api.close(closed));
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a process using a connection runs, and an outside subscriber reads its events', async () => {
    const system = client(baseUrl, KEY);
    const org = await system('POST', '/api/v1/organizations', { name: 'Authorized' });
    expect(org.status).toBe(201);
    await waitFor(
      async () => (await system('GET', `/api/v1/processes/by-org/${org.body.id}`)).status === 200,
      () => `the catalog; service output:\n${logs.join('')}`,
    );
    await waitFor(
      async () => (await system('GET', `/api/v1/processes/executions/${org.body.id}`)).status !== 503,
      () => `the engine; service output:\n${logs.join('')}`,
    );
    const events: PublishedEventEnvelope[] = [];
    let completed: (envelope: PublishedEventEnvelope) => void = () => undefined;
    const completion = new Promise<PublishedEventEnvelope>((done) => (completed = done));
    subscriber = await nats.connectAs('subscriber');
    await subscriber.subscribe('weft.events.execution.>', { durable: 'e2e-execution-reader' }, async (event) => {
      const envelope = event.payload as PublishedEventEnvelope;
      events.push(envelope);
      if (envelope.type === 'ExecutionCompleted') completed(envelope);
    });

    const connection = await system('POST', `/api/v1/connections/by-org/${org.body.id}`, {
      type: 'http',
      name: 'the API',
      data: { token: TOKEN },
    });
    expect(connection.status).toBe(201);
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'read with a secret',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'call',
          type: 'integrationNode',
          position: { x: 1, y: 0 },
          config: { label: 'Call', method: 'GET', url: apiUrl, connectionId: connection.body.id, retries: 0 },
        },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'call' },
        { source_node_id: 'call', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const run = await system('POST', `/api/v1/processes/test/${created.body.id}`, {});
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('completed');
    expect(run.body.output_data.Out.Call).toMatchObject({ status: 200, body: { authorized: true } });
    expect(tokensSeen).toEqual([`Bearer ${TOKEN}`]);

    const finished = await completion;
    expect(finished.streamId).toBe(`execution-${run.body.execution_id}`);
    expect(events.map((event) => event.type)).toContain('ExecutionStarted');
    // Every service did all its work within its permissions: the server refused nothing.
    expect(logs.join('')).not.toMatch(/Permissions Violation/i);
  }, 60_000);
});
