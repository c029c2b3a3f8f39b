import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startAuthorizedNats, type AuthorizedNats } from '../../../libs/runtime/test/support/authorized-nats-server.js';
import { createTestDatabase, freePort, type TestDatabase } from '@weft/test-support';
import { client } from './weft-harness.js';

/**
 * The trigger service as its own built process (services/trigger/dist/main.js), logged in as NATS
 * user `trigger` under the generated permissions, beside the gateway, catalog and engine: a started
 * process's webhook answers synchronously, and a second trigger replica restores the listeners.
 */
const root = resolve(__dirname, '../../..');
const mains = {
  gateway: join(root, 'services/gateway/dist/main.js'),
  catalog: join(root, 'services/process-catalog/dist/main.js'),
  engine: join(root, 'services/engine/dist/main.js'),
  trigger: join(root, 'services/trigger/dist/main.js'),
};
const KEY = 'weft_trigger_e2e_key_0123456789abcdef';

async function waitFor(check: () => Promise<boolean>, what: () => string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    if (await check().catch(() => false)) return;
    await new Promise((wake) => setTimeout(wake, 200));
  }
  throw new Error(`gave up waiting for ${what()}`);
}

describe('distributed trigger service under its own NATS user', () => {
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  let nats: AuthorizedNats;
  let dataDir: string;
  let database: TestDatabase | undefined;
  let baseUrl: string;
  let env: Record<string, string>;

  const start = (name: string, file: string, extra: Record<string, string>): ChildProcess => {
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, NODE_OPTIONS: '', ...env, ...extra },
      stdio: 'pipe',
    });
    child.stdout?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    child.stderr?.on('data', (chunk: Buffer) => logs.push(`${name}: ${chunk.toString()}`));
    children.push(child);
    return child;
  };
  const stopChild = async (child: ChildProcess): Promise<void> => {
    if (child.exitCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  };

  beforeAll(async () => {
    for (const file of Object.values(mains)) {
      if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm build\` before the e2e tests`);
    }
    dataDir = await mkdtemp(join(tmpdir(), 'weft-trigger-e2e-'));
    nats = await startAuthorizedNats();
    database = await createTestDatabase('weft_trigger_e2e');
    const httpPort = await freePort();
    env = {
      WEFT_DATABASE_URL: database.url,
      WEFT_SECRET_KEY: 'trigger-e2e-secret-key-0123456789',
      WEFT_BOOTSTRAP_API_KEY: KEY,
      WEFT_DATA_DIR: dataDir,
      WEFT_LOG_LEVEL: 'warn',
    };
    start('catalog', mains.catalog, nats.envFor('process-catalog'));
    start('engine', mains.engine, nats.envFor('engine'));
    start('trigger', mains.trigger, { ...nats.envFor('trigger'), WEFT_TRIGGER_REPLICA_ID: 'first' });
    start('gateway', mains.gateway, { ...nats.envFor('gateway'), WEFT_PORT: String(httpPort), WEFT_HOST: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${httpPort}`;
    await waitFor(
      async () => (await fetch(`${baseUrl}/readyz`)).status === 200,
      () => `the gateway to be ready; service output:\n${logs.join('')}`,
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of children.reverse()) await stopChild(child);
    await nats?.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a webhook answers through the trigger process, and a new trigger replica restores the listener', async () => {
    const system = client(baseUrl, KEY);
    const org = await system('POST', '/api/v1/organizations', { name: 'Acme' });
    expect(org.status).toBe(201);
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'Hook',
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        {
          id: 'out',
          type: 'outputNode',
          config: { label: 'Out', returnToClient: true, fields: { got: '{{input["In"]["n"]}}' } },
        },
      ],
      edges: [{ source_node_id: 'in', target_node_id: 'out' }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await system('POST', `/api/v1/processes/start/${id}`)).status).toBe(200);
    // The gateway is ready before the trigger process serves its subjects.
    await waitFor(
      async () =>
        (await system('GET', `/api/v1/processes/${id}/listeners`)).body?.listeners?.[0]?.state === 'listening',
      () => `the trigger to listen; output:\n${logs.join('')}`,
    );
    const answered = await system('POST', `/api/v1/processes/${id}/webhook`, { n: 7 });
    expect(answered).toMatchObject({ status: 200, body: { got: 7 } });

    await stopChild(children.find((child) => child.spawnargs.includes(mains.trigger))!);
    start('trigger', mains.trigger, { ...nats.envFor('trigger'), WEFT_TRIGGER_REPLICA_ID: 'second' });
    await waitFor(
      async () =>
        (await system('GET', `/api/v1/processes/${id}/listeners`)).body?.listeners?.[0]?.state === 'listening',
      () => `the new trigger replica to restore the listener; output:\n${logs.join('')}`,
    );
    expect(await system('POST', `/api/v1/processes/${id}/webhook`, { n: 8 })).toMatchObject({
      status: 200,
      body: { got: 8 },
    });
    expect(logs.join('')).not.toMatch(/Permissions Violation/);
  });
});
