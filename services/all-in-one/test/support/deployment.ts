import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NatsBus, NatsUser } from '@weft/bus';
import {
  startAuthorizedNats,
  type AuthorizedNats,
} from '../../../../libs/runtime/test/support/authorized-nats-server.js';
import { client } from '../weft-harness.js';
import {
  createTestDatabase,
  freePort,
  startWeftProcesses,
  type TestDatabase,
  type WeftProcesses,
} from '@weft/test-support';

/**
 * Weft as a user deploys it, for HTTP-level end-to-end tests, chosen by WEFT_E2E_DEPLOYMENT:
 * `embedded` (default) runs the built all-in-one (services/all-in-one/dist/main.js, what
 * `make start` runs: its own PostgreSQL child, in-memory bus); `distributed` runs each service's
 * built dist/main.js as its own process (process catalog, two engines, trigger and testing when
 * built, gateway), each logged in as its own NATS user (infra/nats/auth.conf, as docker-compose
 * runs them), on a nats-server and a fresh PostgreSQL database of this deployment's own. Tests
 * talk HTTP only; a test may SIGKILL and restart a process by name (distributed). The processes
 * are started by @weft/test-support's startWeftProcesses, as the engine benchmark starts them.
 *
 * Suites that need plain Weft share one deployment per jest run (shared-deployment.ts).
 *
 * In-process harnesses remain only where a test reaches inside Weft: weft-harness.ts startEmbedded
 * (the generated bootstrap key object, key-file restarts, tracing spans), weft-modes.ts (tests
 * reading the event store, database or bus, or starting replicas in process: rebuild-read-models,
 * route-fuzz, key-revocation-replicas, tenant-database-refusal, batch-resume, testing-read-models,
 * testing-own-process), the process catalog's gateway-with-catalog fixture (what a request appends
 * or publishes), tenant-chaos (the all-in-one on NATS and PostgreSQL, a third shape) and
 * distributed-trigger (replicas with their own ids).
 */
export type DeploymentKind = 'embedded' | 'distributed';

export const deploymentKind = (): DeploymentKind => {
  const kind = process.env.WEFT_E2E_DEPLOYMENT ?? 'embedded';
  if (kind !== 'embedded' && kind !== 'distributed')
    throw new Error(`WEFT_E2E_DEPLOYMENT must be embedded or distributed, not ${kind}`);
  return kind;
};

const root = resolve(__dirname, '../../../..');

/** A beforeAll that starts a deployment waits this long: separate processes start slowly on a loaded 2-core machine. */
export const DEPLOYMENT_START_TIMEOUT_MS = 240_000;

/**
 * A synchronous run of heavy nodes (a browser's first launch, OCR's first worker) may take longer
 * than the default 30 s wait on a loaded 2-core machine, and would then answer 202: such tests ask
 * for this wait, and take the test timeout below.
 */
export const SLOW_RUN_WAIT_SECONDS = 150;
export const SLOW_RUN_TEST_TIMEOUT_MS = (SLOW_RUN_WAIT_SECONDS + 60) * 1000;

export const DEPLOYMENT_KEY = 'weft_e2e_deployment_key_0123456789abcdef';

export interface DeploymentOptions {
  /** WEFT_* variables for every process (limits, lease length ...). */
  env?: Record<string, string>;
  /** Engine replicas when distributed; default 2. */
  engines?: number;
  /** The HTTP port on 127.0.0.1 (default: a free one). */
  httpPort?: number;
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
  /** WEFT_DATA_DIR of every process (local blob storage): a test may count the files there. */
  dataDir?: string;
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

export async function startDeployment(options: DeploymentOptions = {}): Promise<Deployment> {
  const kind = deploymentKind();
  const dataDir = await mkdtemp(join(tmpdir(), `weft-${kind}-`));
  let nats: AuthorizedNats | undefined;
  let database: TestDatabase | undefined;
  const cleanUp = async (): Promise<void> => {
    await nats?.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };

  let processes: WeftProcesses;
  try {
    if (kind === 'distributed') {
      nats = await startAuthorizedNats();
      database = await createTestDatabase('weft_e2e');
    }
    const natsServer = nats;
    processes = await startWeftProcesses({
      root,
      kind,
      key: DEPLOYMENT_KEY,
      httpPort: options.httpPort ?? (await freePort()),
      env: {
        WEFT_SECRET_KEY: 'weft-e2e-deployment-secret-0123456789',
        WEFT_BOOTSTRAP_API_KEY: DEPLOYMENT_KEY,
        WEFT_DATA_DIR: dataDir,
        WEFT_LOG_LEVEL: 'warn',
        ...options.env,
      },
      databaseUrl: database?.url,
      natsEnvFor: natsServer && ((user) => natsServer.envFor(user as NatsUser)),
      engines: options.engines,
    });
  } catch (error) {
    await cleanUp();
    throw error;
  }

  return {
    kind,
    baseUrl: processes.baseUrl,
    key: DEPLOYMENT_KEY,
    dataDir,
    call: client(processes.baseUrl, DEPLOYMENT_KEY),
    names: processes.names,
    pid: processes.pid,
    databaseUrl: database?.url,
    natsUrl: nats?.url,
    connectNatsAs(user) {
      if (!nats) throw new Error('an embedded deployment has no NATS');
      return nats.connectAs(user);
    },
    kill: processes.kill,
    restart: processes.restart,
    add: processes.add,
    output: processes.output,
    async stop() {
      await processes.stop();
      await cleanUp();
    },
  };
}
