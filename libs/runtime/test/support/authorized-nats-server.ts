import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  NATS_SERVICE_USERS,
  NATS_SUBSCRIBER_USER,
  NatsBus,
  natsInboxPrefix,
  natsPasswordVariable,
  type NatsSecurity,
  type NatsUser,
} from '@weft/bus';
import { createLogger } from '@weft/observability';

/**
 * A nats-server of the test's own on a free loopback port, with JetStream and the committed
 * infra/nats/auth.conf (the users and permissions docker-compose runs), a random password per user.
 */
export interface AuthorizedNats {
  url: string;
  passwords: Record<NatsUser, string>;
  /** The WEFT_NATS_* variables a service running as `user` reads. */
  envFor(user: NatsUser): Record<string, string>;
  connectAs(user: NatsUser, password?: string, security?: NatsSecurity): Promise<NatsBus>;
  stop(): Promise<void>;
}

export const AUTH_CONF = resolve(__dirname, '../../../../infra/nats/auth.conf');

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

const accepts = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const socket = createConnection(port, '127.0.0.1', () => (socket.end(), done(true)));
    socket.on('error', () => done(false));
  });

async function waitUntilListening(port: number, server: ChildProcess, output: () => string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    if (server.exitCode !== null) throw new Error(`nats-server exited: ${output()}`);
    if (await accepts(port)) return;
    await new Promise((wake) => setTimeout(wake, 100));
  }
  throw new Error(`nats-server did not listen on ${port}: ${output()}`);
}

/** `extraConfig`: more server configuration, e.g. a `tls { ... }` block. */
export async function startAuthorizedNats(extraConfig = ''): Promise<AuthorizedNats> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-nats-auth-'));
  const port = await freePort();
  // An include is resolved beside the including file, so the auth file sits next to ours.
  await copyFile(AUTH_CONF, join(dir, 'auth.conf'));
  await writeFile(
    join(dir, 'nats.conf'),
    `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'jetstream')}" }\ninclude ./auth.conf\n${extraConfig}\n`,
  );
  const passwords = Object.fromEntries(
    // nats-server parses the variable as a config value: a letter first keeps it a string (infra/README.md).
    [...NATS_SERVICE_USERS, NATS_SUBSCRIBER_USER].map((user) => [user, `p${randomBytes(12).toString('hex')}`]),
  ) as Record<NatsUser, string>;
  const environment = Object.fromEntries(
    Object.entries(passwords).map(([user, password]) => [natsPasswordVariable(user as NatsUser), password]),
  );
  let output = '';
  const server = spawn('nats-server', ['-c', join(dir, 'nats.conf')], {
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((done) => server.once('exit', done));
  try {
    await waitUntilListening(port, server, () => output);
  } catch (error) {
    server.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const url = `nats://127.0.0.1:${port}`;
  return {
    url,
    passwords,
    envFor: (user) => ({ WEFT_NATS_URL: url, WEFT_NATS_USER: user, WEFT_NATS_PASSWORD: passwords[user] }),
    connectAs: (user, password = passwords[user], security = {}) =>
      NatsBus.connect({
        servers: url,
        name: `test-${user}`,
        security: { ...security, user, password },
        inboxPrefix: natsInboxPrefix(user),
        // The refusals the tests provoke are logged as errors otherwise.
        logger: createLogger(`test-${user}`, { level: 'silent' }),
        connection: { maxReconnectAttempts: 0 },
      }),
    async stop() {
      server.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
