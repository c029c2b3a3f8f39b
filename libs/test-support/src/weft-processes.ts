import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Weft as a user runs it, from the built dist: `node services/all-in-one/dist/main.js` (embedded:
 * its own PostgreSQL child in WEFT_DATA_DIR, in-memory bus), or each service's `dist/main.js` as
 * its own process on NATS and PostgreSQL (distributed: process catalog, engines, trigger and
 * testing when built, gateway). The end-to-end deployment harness and the engine benchmark both
 * start Weft through this, so they measure and test the same thing.
 */
export const WEFT_MAINS = {
  weft: 'services/all-in-one/dist/main.js',
  catalog: 'services/process-catalog/dist/main.js',
  engine: 'services/engine/dist/main.js',
  trigger: 'services/trigger/dist/main.js',
  testing: 'services/testing/dist/main.js',
  gateway: 'services/gateway/dist/main.js',
} as const;
export type WeftService = keyof typeof WEFT_MAINS;
export type DistributedService = Exclude<WeftService, 'weft'>;

/** The NATS user (infra/nats/auth.conf) each distributed service logs in as. */
export const WEFT_SERVICE_NATS_USERS: Record<DistributedService, string> = {
  catalog: 'process-catalog',
  engine: 'engine',
  trigger: 'trigger',
  testing: 'testing',
  gateway: 'gateway',
};

export interface WeftProcessesOptions {
  /** The workspace root holding services/. */
  root: string;
  kind: 'embedded' | 'distributed';
  /** WEFT_* variables for every process (WEFT_DATA_DIR, keys, limits ...). */
  env: Record<string, string>;
  /** Where the gateway (or the all-in-one) listens on 127.0.0.1. */
  httpPort: number;
  /** A system API key that exists once Weft runs (WEFT_BOOTSTRAP_API_KEY in `env`). */
  key: string;
  /** Distributed: the PostgreSQL database every service shares. */
  databaseUrl?: string;
  /** Distributed: the WEFT_NATS_* variables of a NATS user. */
  natsEnvFor?: (user: string) => Record<string, string>;
  /** Engine replicas when distributed; default 2. */
  engines?: number;
}

export interface WeftProcesses {
  baseUrl: string;
  /** Running processes by name: `weft`, or `catalog`, `engine-1`, `engine-2`, `trigger`, `testing`, `gateway`. */
  names(): string[];
  pid(name: string): number | undefined;
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  restart(name: string): Promise<void>;
  /** Starts one more process of a service (distributed), e.g. a third engine. */
  add(name: string, service: 'engine' | 'catalog' | 'gateway'): void;
  /** What the processes printed, last lines (for failure messages). */
  output(): string;
  /** SIGTERM to every process (SIGKILL after 10 s), newest first. */
  stop(): Promise<void>;
}

interface Running {
  service: WeftService;
  env: Record<string, string>;
  child: ChildProcess;
}

/**
 * Whether every service of a Weft answers through its gateway: each probe asks one service for
 * something that does not exist, so its own 404 (not the gateway's 503 "no service answers") means
 * it serves. The trigger and testing services are probed when built, as they are started then.
 */
export async function weftServes(root: string, baseUrl: string, key: string): Promise<boolean> {
  const probes = [
    `/api/v1/processes/executions/${crypto.randomUUID()}`, // catalog and an engine
    ...(existsSync(join(root, WEFT_MAINS.trigger)) ? [`/api/v1/processes/${crypto.randomUUID()}/listeners`] : []),
    ...(existsSync(join(root, WEFT_MAINS.testing)) ? [`/api/v1/test-cases/by-id/${crypto.randomUUID()}`] : []),
  ];
  const answers = await Promise.all(
    probes.map((path) => fetch(`${baseUrl}${path}`, { headers: { 'x-api-key': key } }).then((r) => r.status)),
  );
  return answers.every((status) => status === 404);
}

async function waitFor(check: () => Promise<boolean>, what: () => string, timeoutMs: number): Promise<void> {
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

/**
 * V8 flags of every Weft process, as its start scripts (package.json), the image's command
 * (Dockerfile) and docker-compose.yml pass them (docs/performance.md, twelfth and seventeenth
 * sessions, has the measurements; NODE_OPTIONS refuses the second):
 * - `--max-semi-space-size`: Node 24 sizes the young generation at 64 MiB per semi-space on a
 *   machine with this much memory, 128 MiB reserved that the load fills. The twelfth session
 *   chose 16 for the embedded process (as fast, 80-170 MiB less); a service of a distributed Weft
 *   keeps it (two pairs of runs at 32 showed no gain). The embedded process, which allocates for
 *   every service at once, now takes 32: fewer young collections, 6% less CPU and 8% more
 *   requests/s at c=50 (seventeenth session), for about 35 MiB more.
 * - `--heap-growing-percent=60`: after a full collection the old generation may grow to 1.6 times
 *   what survived it, where V8 otherwise lets a fast-collecting heap grow up to four times; under
 *   load the old generation filled with promoted garbage (RSS 490 MiB after a minute at c=50,
 *   300 MiB with the flag, at the same throughput; the collector's threads work more).
 */
export const WEFT_SERVICE_NODE_FLAGS = ['--max-semi-space-size=16', '--heap-growing-percent=60'] as const;
export const WEFT_EMBEDDED_NODE_FLAGS = ['--max-semi-space-size=32', '--heap-growing-percent=60'] as const;

/** The flags a Weft process starts with: the embedded process's, or a service's. */
export const nodeFlagsOf = (service: WeftService): readonly string[] =>
  service === 'weft' ? WEFT_EMBEDDED_NODE_FLAGS : WEFT_SERVICE_NODE_FLAGS;

/** Starts Weft and resolves once the gateway, the catalog and an engine answer over HTTP. */
export async function startWeftProcesses(options: WeftProcessesOptions): Promise<WeftProcesses> {
  const { root, kind } = options;
  const logs: string[] = [];
  const running = new Map<string, Running>();
  const needed: WeftService[] = kind === 'embedded' ? ['weft'] : ['catalog', 'engine', 'gateway'];
  for (const service of needed) {
    if (!existsSync(join(root, WEFT_MAINS[service])))
      throw new Error(`${WEFT_MAINS[service]} is missing: run \`pnpm build\` first`);
  }
  if (kind === 'distributed' && (!options.databaseUrl || !options.natsEnvFor))
    throw new Error('a distributed Weft needs databaseUrl and natsEnvFor');

  const spawnService = (name: string, service: WeftService, base: Record<string, string>): void => {
    const nats = service === 'weft' || !options.natsEnvFor ? {} : options.natsEnvFor(WEFT_SERVICE_NATS_USERS[service]);
    // WEFT_NODE_ARGS: flags for every Weft process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a benchmark).
    const nodeArgs = (process.env.WEFT_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const child = spawn(process.execPath, [...nodeFlagsOf(service), ...nodeArgs, join(root, WEFT_MAINS[service])], {
      env: { ...process.env, NODE_OPTIONS: '', ...base, ...nats },
      stdio: 'pipe',
    });
    const keep = (chunk: Buffer): void => {
      logs.push(`${name}: ${chunk.toString()}`);
      if (logs.length > 2000) logs.splice(0, 1000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    running.set(name, { service, env: base, child });
  };

  const stop = async (): Promise<void> => {
    const all = [...running.values()].reverse();
    for (const { child } of all) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((r) => (timer = setTimeout(r, 10_000)));
    await Promise.race([Promise.all(all.map(({ child }) => exited(child))), timeout]);
    clearTimeout(timer);
    for (const { child } of all) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(all.map(({ child }) => exited(child)));
  };

  const baseUrl = `http://127.0.0.1:${options.httpPort}`;
  const http = { WEFT_PORT: String(options.httpPort), WEFT_HOST: '127.0.0.1' };
  try {
    if (kind === 'embedded') {
      spawnService('weft', 'weft', { ...options.env, ...http });
    } else {
      const env = { ...options.env, WEFT_DATABASE_URL: options.databaseUrl as string };
      // The catalog first (it migrates its tables), then the engines, the optional services, the gateway.
      spawnService('catalog', 'catalog', env);
      for (let i = 1; i <= (options.engines ?? 2); i++) spawnService(`engine-${i}`, 'engine', env);
      for (const service of ['trigger', 'testing'] as const)
        if (existsSync(join(root, WEFT_MAINS[service]))) spawnService(service, service, env);
      spawnService('gateway', 'gateway', { ...env, ...http });
    }
    await waitFor(
      async () => (await fetch(`${baseUrl}/readyz`)).status === 200,
      () => `the gateway to be ready; output:\n${logs.join('')}`,
      120_000,
    );
    // Ready is the gateway alone: wait until every service answers through it.
    await waitFor(
      () => weftServes(root, baseUrl, options.key),
      () => `the catalog, engines, trigger and testing services to answer; output:\n${logs.join('')}`,
      60_000,
    );
  } catch (error) {
    for (const { child } of running.values()) child.kill('SIGKILL');
    await Promise.all([...running.values()].map(({ child }) => exited(child)));
    throw error;
  }

  return {
    baseUrl,
    names: () => [...running.keys()],
    pid: (name) => running.get(name)?.child.pid,
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
    stop,
  };
}
