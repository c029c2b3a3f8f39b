import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { freePort } from './free-port.js';

export interface NatsServerOptions {
  /** Bytes; the server's default (1 MiB) when unset. */
  maxPayload?: number;
  /** Files copied next to the configuration and included by it (an include resolves beside the including file). */
  include?: string[];
  /** More configuration, e.g. a `tls { ... }` block. */
  config?: string;
  /** Variables the configuration reads (e.g. the passwords of infra/nats/auth.conf). */
  env?: Record<string, string>;
}

export interface TestNatsServer {
  url: string;
  port: number;
  /** The server's process id (benchmarks read its memory). */
  pid: number | undefined;
  /** Stops the server and starts it again on the same port and JetStream store (what it kept survives). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const accepts = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = createConnection(port, '127.0.0.1', () => (socket.end(), done(true)));
    socket.on('error', () => done(false));
  });

/**
 * A nats-server of the test's own on a free loopback port, with JetStream in a temporary
 * directory: no other suite's subjects or streams share it, and stop() removes everything.
 */
export async function startNatsServer(options: NatsServerOptions = {}): Promise<TestNatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-nats-'));
  const port = await freePort();
  const includes = options.include ?? [];
  for (const file of includes) await copyFile(file, join(dir, basename(file)));
  await writeFile(
    join(dir, 'nats.conf'),
    [
      `listen: 127.0.0.1:${port}`,
      options.maxPayload === undefined ? '' : `max_payload: ${options.maxPayload}`,
      `jetstream { store_dir: "${join(dir, 'jetstream')}" }`,
      ...includes.map((file) => `include ./${basename(file)}`),
      options.config ?? '',
    ].join('\n') + '\n',
  );
  let output = '';
  const launch = async () => {
    const server = spawn('nats-server', ['-c', join(dir, 'nats.conf')], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise((done) => server.once('exit', done));
    const kill = async () => {
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
      await exited;
    };
    for (let attempt = 0; !(await accepts(port)); attempt += 1) {
      if (server.exitCode !== null || attempt > 150) {
        await kill();
        await rm(dir, { recursive: true, force: true });
        throw new Error(`nats-server did not start on ${port}: ${output}`);
      }
      await new Promise((wake) => setTimeout(wake, 100));
    }
    return { pid: server.pid, kill };
  };
  let running = await launch();
  const handle: TestNatsServer = {
    url: `nats://127.0.0.1:${port}`,
    port,
    pid: running.pid,
    async restart() {
      await running.kill();
      running = await launch();
      handle.pid = running.pid;
    },
    async stop() {
      await running.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return handle;
}
