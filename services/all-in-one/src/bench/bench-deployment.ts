import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NATS_SERVICE_USERS, NATS_SUBSCRIBER_USER, natsPasswordVariable, type NatsUser } from '@weft/bus';
import {
  createTestDatabase,
  freePort,
  startAuthorizedNatsServer,
  startWeftProcesses,
  type AuthorizedNatsServer,
  type TestDatabase,
  type WeftProcesses,
} from '@weft/test-support';
import { descendants } from './process-tree.js';

/**
 * Weft for the engine benchmark, started as a user runs it from the built dist (the same launcher
 * as the end-to-end deployment tests): embedded = `node services/all-in-one/dist/main.js` with a
 * data dir of its own (its PostgreSQL child, in-memory bus); distributed = catalog, two engines,
 * trigger and testing (when built) and gateway as separate processes, each as its own NATS user
 * (infra/nats/auth.conf) on a nats-server started here on a free loopback port, and a fresh
 * database on the PostgreSQL server of WEFT_BENCH_DATABASE_URL (else WEFT_TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/postgres), dropped at the end.
 */
export type BenchMode = 'embedded' | 'distributed';

export interface MemoryReading {
  name: string;
  /** MiB */
  rss: number;
}

export interface BenchDeployment {
  mode: BenchMode;
  baseUrl: string;
  /** The bootstrap (system) key: only for creating the organization and its user's key. */
  systemKey: string;
  /** Where Weft keeps its tables (the embedded server's unix socket, or the fresh database). */
  databaseUrl: string;
  /** VmRSS of each Weft Node process, and of what else this deployment runs (PostgreSQL child, nats-server). */
  memory(): MemoryReading[];
  stop(): Promise<void>;
}

const MIB = 1024 * 1024;

/** VmRSS of one process in MiB (0 once it is gone). */
export function rssOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return (Number(kb ?? 0) * 1024) / MIB;
  } catch {
    return 0;
  }
}

/**
 * Proportional set size of a process tree in MiB: PostgreSQL's processes share their buffers,
 * which RSS would count once per process.
 */
function pssOfTree(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process ended meanwhile
    }
  }
  return (kb * 1024) / MIB;
}

/** `engines`: engine processes of a distributed Weft (2, as docker-compose.yml runs). */
export async function startBenchDeployment(
  mode: BenchMode,
  root: string,
  options: { engines?: number } = {},
): Promise<BenchDeployment> {
  const systemKey = `weft_bench_${randomUUID().replace(/-/g, '')}`;
  const dataDir = await mkdtemp(join(tmpdir(), `weft-engine-bench-${mode}-`));
  let nats: AuthorizedNatsServer | undefined;
  let database: TestDatabase | undefined;
  let processes: WeftProcesses | undefined;
  const stop = async (): Promise<void> => {
    await processes?.stop();
    await nats?.stop();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    if (mode === 'distributed') {
      nats = await startAuthorizedNatsServer({
        authConf: join(root, 'infra/nats/auth.conf'),
        users: [...NATS_SERVICE_USERS, NATS_SUBSCRIBER_USER],
        passwordVariable: (user) => natsPasswordVariable(user as NatsUser),
      });
      database = await createTestDatabase(
        'weft_bench',
        process.env.WEFT_BENCH_DATABASE_URL ??
          process.env.WEFT_TEST_DATABASE_URL ??
          'postgres://postgres@127.0.0.1:5432/postgres',
      );
    }
    const natsServer = nats;
    processes = await startWeftProcesses({
      root,
      kind: mode,
      engines: options.engines,
      key: systemKey,
      httpPort: await freePort(),
      env: {
        WEFT_DATA_DIR: dataDir,
        WEFT_BOOTSTRAP_API_KEY: systemKey,
        WEFT_SECRET_KEY: 'weft-bench-secret-key-0123456789',
        WEFT_LOG_LEVEL: 'warn',
      },
      databaseUrl: database?.url,
      natsEnvFor: natsServer && ((user) => natsServer.envFor(user)),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const running = processes;
  // The embedded server listens on a unix socket in <data dir>/run (the data dir's path is short).
  const socketDir = join(dataDir, 'run');
  if (mode === 'embedded' && !existsSync(join(socketDir, '.s.PGSQL.5432')))
    throw new Error(`the embedded PostgreSQL socket is not in ${socketDir}`);
  return {
    mode,
    baseUrl: running.baseUrl,
    systemKey,
    databaseUrl:
      database?.url ?? `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}&port=5432`,
    memory() {
      const readings = running.names().map((name) => ({ name, rss: rssOf(running.pid(name)) }));
      const weftPid = running.pid('weft');
      if (weftPid !== undefined)
        readings.push({ name: 'embedded PostgreSQL (PSS)', rss: pssOfTree(descendants(weftPid)) });
      if (nats) readings.push({ name: 'nats-server', rss: rssOf(nats.pid) });
      return readings;
    },
    stop,
  };
}
