import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * The servers a distributed-mode test stands on, owned by that test alone: a nats-server of its
 * own on a free loopback port (no other suite's subjects or streams share it) and a fresh
 * PostgreSQL database, both removed afterwards.
 */
const requiredDatabaseUrl = (): string => {
  const url = process.env.WEFT_TEST_DATABASE_URL;
  if (!url) throw new Error('WEFT_TEST_DATABASE_URL is not set (run through scripts/run-tests.sh)');
  return url;
};

export const freePort = (): Promise<number> =>
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

export interface OwnNatsServer {
  url: string;
  stop(): Promise<void>;
}

export async function startOwnNatsServer(): Promise<OwnNatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-nats-'));
  const port = await freePort();
  const child: ChildProcess = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], {
    stdio: 'ignore',
  });
  let failure: Error | undefined;
  child.on('error', (error) => (failure = error));
  const deadline = Date.now() + 15_000;
  while (!(await portOpen(port))) {
    if (failure) throw new Error(`nats-server could not start: ${failure.message}`);
    if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${port} within 15 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      if (child.exitCode === null) child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface OwnDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createOwnDatabase(prefix: string): Promise<OwnDatabase> {
  const name = `${prefix}_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const adminDatabaseUrl = requiredDatabaseUrl();
  const admin = new pg.Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    url: adminDatabaseUrl.replace(/\/[^/]*$/, `/${name}`),
    async drop() {
      const client = new pg.Client({ connectionString: adminDatabaseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
