import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '@weft/config';
import pg from 'pg';
import { startWeft, type RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, removeDir, startEmbedded, tempDataDir } from './weft-harness.js';

/**
 * The whole Weft over HTTP in either mode. Embedded: PGlite and the in-memory bus. Distributed:
 * the same composition over a nats-server of this suite's own (the standard stream and queue
 * names are then shared with nobody) and a fresh PostgreSQL database on WEFT_TEST_DATABASE_URL.
 */
export type WeftMode = 'embedded' | 'distributed';
export const WEFT_MODES: WeftMode[] = ['embedded', 'distributed'];

export interface WeftUnderTest {
  weft: RunningWeft;
  dataDir: string;
  /** The WEFT_* variables that reach this Weft's data: a command run beside it gets them. */
  env: Record<string, string>;
  /** Starts another Weft on the same database and bus (distributed) or data dir (embedded, after stopAll). */
  startReplica(env?: Record<string, string>): Promise<RunningWeft>;
  /** Stops every Weft started here, keeping the data (PGlite has one writer). */
  stopAll(): Promise<void>;
  dispose(): Promise<void>;
}

const testDatabaseUrl = (): string => {
  const url = process.env.WEFT_TEST_DATABASE_URL;
  if (!url) throw new Error('WEFT_TEST_DATABASE_URL is not set (run the tests through scripts/run-tests.sh)');
  return url;
};

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

const portOpen = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = createConnection(port, '127.0.0.1', () => (socket.end(), done(true)));
    socket.on('error', () => done(false));
  });

async function startNatsServer(dataDir: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', join(dataDir, 'nats')], {
    stdio: 'ignore',
  });
  for (let tries = 0; tries < 100; tries += 1) {
    if (await portOpen(port)) return { url: `nats://127.0.0.1:${port}`, process: child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`nats-server did not listen on ${port}`);
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function startWeftIn(mode: WeftMode, env: Record<string, string> = {}): Promise<WeftUnderTest> {
  const dataDir = await tempDataDir();
  const base = { WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY, ...env };
  if (mode === 'embedded') {
    const running: RunningWeft[] = [await startEmbedded(dataDir, base)];
    const stopAll = async () => {
      for (const weft of running.splice(0).reverse()) await weft.stop();
    };
    return {
      weft: running[0]!,
      dataDir,
      env: { ...base, WEFT_DATA_DIR: dataDir },
      async startReplica(more = {}) {
        const weft = await startEmbedded(dataDir, { ...base, ...more });
        running.push(weft);
        return weft;
      },
      stopAll,
      async dispose() {
        await stopAll();
        await removeDir(dataDir);
      },
    };
  }
  const nats = await startNatsServer(dataDir);
  const databaseName = `weft_e2e_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  await admin(`CREATE DATABASE ${databaseName}`);
  const distributed = {
    ...base,
    WEFT_DATABASE_URL: testDatabaseUrl().replace(/\/[^/]*$/, `/${databaseName}`),
    WEFT_NATS_URL: nats.url,
    WEFT_SECRET_KEY: 'weft-e2e-secret-key-0123456789',
  };
  const replicas: RunningWeft[] = [];
  const stopAll = async () => {
    for (const replica of replicas.splice(0).reverse()) await replica.stop();
  };
  const start = async (more: Record<string, string> = {}) => {
    const replica = await startWeft(
      loadConfig({ WEFT_PORT: '0', WEFT_HOST: '127.0.0.1', WEFT_DATA_DIR: dataDir, ...distributed, ...more }),
    );
    replicas.push(replica);
    return replica;
  };
  try {
    const weft = await start();
    return {
      weft,
      dataDir,
      env: { ...distributed, WEFT_DATA_DIR: dataDir },
      startReplica: start,
      stopAll,
      async dispose() {
        await stopAll().catch(() => undefined);
        nats.process.kill('SIGTERM');
        await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
        await removeDir(dataDir);
      },
    };
  } catch (error) {
    nats.process.kill('SIGKILL');
    await admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    throw error;
  }
}
