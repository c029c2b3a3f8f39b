import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NatsBus, NatsUser } from '@weft/bus';
import {
  startAuthorizedNats,
  type AuthorizedNats,
} from '../../../../libs/runtime/test/support/authorized-nats-server.js';
import { client } from '../weft-harness.js';
import { createTestDatabase, freePort, type TestDatabase } from '@weft/test-support';

/**
 * Weft as a user deploys it, for HTTP-level end-to-end tests, chosen by WEFT_E2E_DEPLOYMENT:
 * `embedded` (default) runs the built all-in-one (services/all-in-one/dist/main.js, what
 * `make start` runs: PGlite, in-memory bus); `distributed` runs each service's built dist/main.js
 * as its own process (process catalog, two engines, trigger and testing when built, gateway),
 * each logged in as its own NATS user (infra/nats/auth.conf, as docker-compose runs them), on a
 * nats-server and a fresh PostgreSQL database of this deployment's own. Tests talk HTTP only; a
 * test may SIGKILL and restart a process by name (distributed).
 *
 * In-process harnesses remain only where a test reaches inside Weft: weft-harness.ts startEmbedded
 * (the generated bootstrap key object, key-file restarts), weft-modes.ts (tests reading the event
 * store or starting replicas in process: webhook-trigger, trigger-lifecycle, rebuild-read-models,
 * route-fuzz, tracing, trace-fallback, the testing service's suites), tenant-chaos (the all-in-one
 * on NATS and PostgreSQL, a third shape) and distributed-trigger (replicas with their own ids).
 */
export type DeploymentKind = 'embedded' | 'distributed';

export const deploymentKind = (): DeploymentKind => {
  const kind = process.env.WEFT_E2E_DEPLOYMENT ?? 'embedded';
  if (kind !== 'embedded' && kind !== 'distributed')
    throw new Error(`WEFT_E2E_DEPLOYMENT must be embedded or distributed, not ${kind}`);
  return kind;
};

const root = resolve(__dirname, '../../../..');
const MAINS = {
  weft: 'services/all-in-one/dist/main.js',
  catalog: 'services/process-catalog/dist/main.js',
  engine: 'services/engine/dist/main.js',
  trigger: 'services/trigger/dist/main.js',
  testing: 'services/testing/dist/main.js',
  gateway: 'services/gateway/dist/main.js',
} as const;
type Service = keyof typeof MAINS;
const NATS_USERS: Record<Exclude<Service, 'weft'>, NatsUser> = {
  catalog: 'process-catalog',
  engine: 'engine',
  trigger: 'trigger',
  testing: 'testing',
  gateway: 'gateway',
};

export const DEPLOYMENT_KEY = 'weft_e2e_deployment_key_0123456789abcdef';

export interface DeploymentOptions {
  /** WEFT_* variables for every process (limits, lease length ...). */
  env?: Record<string, string>;
  /** Engine replicas when distributed; default 2. */
  engines?: number;
}

export interface Deployment {
  kind: DeploymentKind;
  baseUrl: string;
  /** The bootstrap (system) API key. */
  key: string;
  call: ReturnType<typeof client>;
  /** Running processes by name: `weft`, or `catalog`, `engine-1`, `engine-2`, `trigger`, `testing`, `gateway`. */
  names(): string[];
  pid(name: string): number | undefined;
  /** The database and NATS server of a distributed deployment (chaos tests compare them). */
  databaseUrl?: string;
  natsUrl?: string;
  /** A NATS connection as one of the deployment's users (distributed), e.g. `subscriber`. */
  connectNatsAs(user: NatsUser): Promise<NatsBus>;
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  restart(name: string): Promise<void>;
  /** Starts one more process of a service (distributed), e.g. a third engine. */
  add(name: string, service: 'engine' | 'catalog' | 'gateway'): void;
  /** What the processes printed (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

interface Running {
  service: Service;
  env: Record<string, string>;
  child: ChildProcess;
}

async function waitFor(check: () => Promise<boolean>, what: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((done) => child.once('exit', () => done()));

export async function startDeployment(options: DeploymentOptions = {}): Promise<Deployment> {
  const kind = deploymentKind();
  const dataDir = await mkdtemp(join(tmpdir(), `weft-${kind}-`));
  const logs: string[] = [];
  const running = new Map<string, Running>();
  let nats: AuthorizedNats | undefined;
  let database: TestDatabase | undefined;

  const spawnService = (name: string, service: Service, base: Record<string, string>): void => {
    const env = service === 'weft' || !nats ? base : { ...base, ...nats.envFor(NATS_USERS[service]) };
    const file = join(root, MAINS[service]);
    const child = spawn(process.execPath, [file], { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: 'pipe' });
    const keep = (chunk: Buffer): void => {
      logs.push(`${name}: ${chunk.toString()}`);
      if (logs.length > 2000) logs.splice(0, 1000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    running.set(name, { service, env: base, child });
  };

  const httpPort = await freePort();
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const common = {
    WEFT_SECRET_KEY: 'weft-e2e-deployment-secret-0123456789',
    WEFT_BOOTSTRAP_API_KEY: DEPLOYMENT_KEY,
    WEFT_DATA_DIR: dataDir,
    WEFT_LOG_LEVEL: 'warn',
    ...options.env,
  };
  const http = { WEFT_PORT: String(httpPort), WEFT_HOST: '127.0.0.1' };
  const needed: Service[] = kind === 'embedded' ? ['weft'] : ['catalog', 'engine', 'gateway'];
  for (const service of needed) {
    if (!existsSync(join(root, MAINS[service])))
      throw new Error(`${MAINS[service]} is missing: run \`pnpm build\` before the e2e tests`);
  }

  try {
    if (kind === 'embedded') {
      spawnService('weft', 'weft', { ...common, ...http });
    } else {
      nats = await startAuthorizedNats();
      database = await createTestDatabase('weft_e2e');
      const env = { ...common, WEFT_DATABASE_URL: database.url };
      // The catalog first (it migrates its tables), then the engines, the optional services, the gateway.
      spawnService('catalog', 'catalog', env);
      for (let i = 1; i <= (options.engines ?? 2); i++) spawnService(`engine-${i}`, 'engine', env);
      for (const service of ['trigger', 'testing'] as const)
        if (existsSync(join(root, MAINS[service]))) spawnService(service, service, env);
      spawnService('gateway', 'gateway', { ...env, ...http });
    }
    await waitFor(
      async () => (await fetch(`${baseUrl}/readyz`)).status === 200,
      () => `the gateway to be ready; output:\n${logs.join('')}`,
    );
    const system = client(baseUrl, DEPLOYMENT_KEY);
    // Ready is the gateway alone: wait until the catalog and an engine answer through it.
    await waitFor(
      async () => (await system('GET', `/api/v1/processes/executions/${crypto.randomUUID()}`)).status === 404,
      () => `the catalog and engines to answer; output:\n${logs.join('')}`,
    );
  } catch (error) {
    for (const { child } of running.values()) child.kill('SIGKILL');
    await nats?.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  const stopProcesses = async (): Promise<void> => {
    const all = [...running.values()].reverse();
    for (const { child } of all) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((r) => (timer = setTimeout(r, 10_000)));
    await Promise.race([Promise.all(all.map(({ child }) => exited(child))), timeout]);
    clearTimeout(timer);
    for (const { child } of all) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(all.map(({ child }) => exited(child)));
  };

  return {
    kind,
    baseUrl,
    key: DEPLOYMENT_KEY,
    call: client(baseUrl, DEPLOYMENT_KEY),
    names: () => [...running.keys()],
    pid: (name) => running.get(name)?.child.pid,
    databaseUrl: database?.url,
    natsUrl: nats?.url,
    connectNatsAs(user) {
      if (!nats) throw new Error('an embedded deployment has no NATS');
      return nats.connectAs(user);
    },
    async kill(name, signal = 'SIGKILL') {
      const target = running.get(name);
      if (!target) throw new Error(`no process ${name} in this deployment`);
      target.child.kill(signal);
      await exited(target.child);
    },
    async restart(name) {
      const target = running.get(name);
      if (!target) throw new Error(`no process ${name} in this deployment`);
      if (target.child.exitCode === null && target.child.signalCode === null) {
        target.child.kill('SIGTERM');
        await exited(target.child);
      }
      spawnService(name, target.service, target.env);
    },
    add(name, service) {
      const env = [...running.values()].find((r) => r.service === service)?.env;
      if (!env || running.has(name)) throw new Error(`cannot add ${name} to this deployment`);
      spawnService(name, service, env);
    },
    output: () => logs.join(''),
    async stop() {
      await stopProcesses();
      await nats?.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
