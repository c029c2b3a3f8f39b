import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import { postgresBinaries } from './postgres-binaries.js';
import { letPostgresTraverse, postgresOsUser, requireReachable, type PostgresOsUser } from './postgres-os-user.js';
import { prepareSocketDirectory, SOCKET_PORT, socketDirectoryFor } from './socket-directory.js';

export interface EmbeddedPostgresOptions {
  /** WEFT_DATA_DIR: the cluster goes to `<dataDir>/postgres`, the socket to `<dataDir>/run`. */
  dataDir: string;
  startTimeoutMs: number;
  stopTimeoutMs: number;
  /** The server's warnings and errors (its stderr), line by line. */
  onLog?: (line: string) => void;
}

export interface EmbeddedPostgres {
  /** A `pg` connection string over the unix socket. */
  readonly url: string;
  readonly pid: number;
  readonly clusterDir: string;
  /** Fast shutdown (a checkpoint, then exit); resolves when the server has exited. */
  stop(): Promise<void>;
}

export const clusterDirectory = (dataDir: string): string => join(dataDir, 'postgres');

/**
 * Durability is the point of this server (issue 13): set on the command line, which wins over
 * postgresql.conf and ALTER SYSTEM, so nothing can turn it off by accident.
 */
const SERVER_SETTINGS: Record<string, string> = {
  fsync: 'on',
  synchronous_commit: 'on',
  full_page_writes: 'on',
  // Unix socket only: no TCP port to clash with (the machine's PostgreSQL on 5432) or to expose.
  listen_addresses: '',
  unix_socket_permissions: '0700',
  log_checkpoints: 'off',
  log_line_prefix: '',
};

/** glibc's dynamic mmap threshold made every backend trim and re-fault its heap; raised, throughput doubled here. */
const MALLOC_ENV = {
  MALLOC_MMAP_THRESHOLD_: String(32 * 1024 * 1024),
  MALLOC_TRIM_THRESHOLD_: String(64 * 1024 * 1024),
  MALLOC_TOP_PAD_: String(16 * 1024 * 1024),
};

/** setpriv (util-linux) makes the kernel stop the server when Weft dies, even by SIGKILL. */
const hasSetpriv = (): boolean =>
  process.platform === 'linux' && spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status === 0;

function spawnAs(user: PostgresOsUser | undefined, command: string, args: string[], env: NodeJS.ProcessEnv) {
  return {
    command,
    args,
    options: { env, ...(user ? { uid: user.uid, gid: user.gid } : {}) },
  };
}

async function initialise(
  clusterDir: string,
  initdb: string,
  user: PostgresOsUser | undefined,
  timeoutMs: number,
): Promise<void> {
  // initdb into a side folder, renamed when complete: a crash mid-way never leaves half a cluster.
  const partial = `${clusterDir}.init-${randomBytes(4).toString('hex')}`;
  await mkdir(partial, { mode: 0o700 });
  if (user) await chown(partial, user.uid, user.gid);
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  const { command, args, options } = spawnAs(
    user,
    initdb,
    [
      ...['-D', partial, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions'],
      // One syncfs instead of an fsync per file: as durable, half the time of a new data dir (1.5 s vs 3.3 s here).
      ...(process.platform === 'linux' ? ['--sync-method=syncfs'] : []),
    ],
    env,
  );
  const output: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new EmbeddedPostgresError(`initdb failed (${signal ?? code}): ${output.join('').trim()}`));
      });
    });
    await rename(partial, clusterDir);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
}

/** Whether `promise` settled within `ms`; the timer is cleared, so it never holds the process open. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function parentOf(pid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Line 8 of postmaster.pid is the server's status: "starting", "ready", "stopping". */
async function serverStatus(clusterDir: string): Promise<{ pid: number; status: string } | undefined> {
  const lines = (await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  return Number.isInteger(pid) && pid > 0 ? { pid, status: lines[7]?.trim() ?? '' } : undefined;
}

/**
 * A server left by a Weft that died is shutting down (setpriv's parent-death signal): wait for it.
 * Where setpriv is missing it is orphaned (its parent is init): stop it. A server with a live
 * parent belongs to another Weft on the same data dir.
 */
async function clearLeftoverServer(clusterDir: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const server = await serverStatus(clusterDir);
    if (!server || !isAlive(server.pid)) return;
    const orphaned = parentOf(server.pid) === 1;
    if (orphaned && server.status !== 'stopping') process.kill(server.pid, 'SIGINT');
    if ((!orphaned && server.status !== 'stopping') || Date.now() > deadline) {
      throw new EmbeddedPostgresError(
        `PostgreSQL (pid ${server.pid}) still runs on ${clusterDir}: another Weft uses this WEFT_DATA_DIR; stop it first`,
      );
    }
    await sleep(100);
  }
}

async function waitUntilReady(child: ChildProcess, clusterDir: string, timeoutMs: number, log: string[]) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new EmbeddedPostgresError(`PostgreSQL exited while starting: ${log.join('').trim() || 'no output'}`);
    }
    // Line 8 of postmaster.pid is the server's status; "ready" once it accepts connections.
    const status = (await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[7];
    if (status?.trim() === 'ready') return;
    if (Date.now() > deadline) {
      child.kill('SIGQUIT');
      throw new EmbeddedPostgresError(`PostgreSQL did not start within ${timeoutMs} ms: ${log.join('').trim()}`);
    }
    await sleep(25);
  }
}

/**
 * A real PostgreSQL (embedded-postgres' binaries) as a child process on a unix socket in the data
 * dir: `initdb` on first start, then `postgres` on every start; stopped with Weft, and by the
 * kernel when Weft dies.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const clusterDir = clusterDirectory(options.dataDir);
  const binaries = await postgresBinaries();
  const user = await postgresOsUser();
  await mkdir(options.dataDir, { recursive: true });
  if (user) {
    await requireReachable(binaries.postgres, user, 'its own binary');
    await letPostgresTraverse(options.dataDir, user);
    await requireReachable(options.dataDir, user, 'the data dir');
  }
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    await initialise(clusterDir, binaries.initdb, user, options.startTimeoutMs);
  }
  await clearLeftoverServer(clusterDir, options.stopTimeoutMs);
  const socketDir = socketDirectoryFor(options.dataDir);
  await prepareSocketDirectory(socketDir, user);

  const settings = Object.entries(SERVER_SETTINGS).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const serverArgs = ['-D', clusterDir, '-p', String(SOCKET_PORT), '-k', socketDir, ...settings];
  const wrapped = hasSetpriv()
    ? spawnAs(user, 'setpriv', ['--pdeathsig', 'INT', '--', binaries.postgres, ...serverArgs], {})
    : spawnAs(user, binaries.postgres, serverArgs, {});
  const child = spawn(wrapped.command, wrapped.args, {
    ...wrapped.options,
    env: { ...process.env, ...MALLOC_ENV, LC_ALL: 'C', LANG: 'C' },
    // Its own process group: a terminal's Ctrl-C reaches Weft, which stops the server after its last commit.
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const startLog: string[] = [];
  let starting = true;
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (starting) startLog.push(text);
    for (const line of text.split('\n')) if (line.trim()) options.onLog?.(line);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', (error) => startLog.push(String(error)));
  // Last resort when Weft exits without stop(): the server gets its fast-shutdown signal.
  const onExit = (): void => {
    child.kill('SIGINT');
  };
  process.once('exit', onExit);
  // The server never keeps Weft (or a test runner) alive by itself.
  child.unref();
  (child.stderr as unknown as { unref?: () => void }).unref?.();

  try {
    await waitUntilReady(child, clusterDir, options.startTimeoutMs, startLog);
  } catch (error) {
    process.removeListener('exit', onExit);
    await settlesWithin(exited, options.stopTimeoutMs);
    throw error;
  }
  starting = false;
  startLog.length = 0;

  let stopping: Promise<void> | undefined;
  return {
    url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}&port=${SOCKET_PORT}`,
    pid: child.pid!,
    clusterDir,
    stop() {
      stopping ??= (async () => {
        process.removeListener('exit', onExit);
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGINT');
        if (!(await settlesWithin(exited, options.stopTimeoutMs))) {
          // Immediate shutdown: recovery replays the WAL on the next start; no commit is lost.
          child.kill('SIGQUIT');
          await exited;
        }
      })();
      return stopping;
    },
  };
}
