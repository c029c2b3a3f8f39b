import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import {
  APPEND_LOCK_NAMESPACE,
  migrate,
  openDatabase,
  PostgresEventStore,
  SessionAdvisoryLock,
  type Database,
  type Trx,
} from '../src/index.js';
import { dropSchema, testDatabaseUrl, uniqueName } from './support/test-database.js';

/** A TCP relay to PostgreSQL that can stop passing bytes while keeping both sockets open: a hung network. */
async function freezableProxy(target: URL): Promise<{ url: string; freeze(): void; close(): Promise<void> }> {
  let frozen = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(target.port || 5432), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('data', (chunk: Buffer) => void (frozen || to.write(chunk)));
      from.on('close', () => to.destroy());
      from.on('error', () => undefined);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => void (frozen = true),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The kernel's view of a local TCP socket: its timer column says whether keepalive is armed. */
async function tcpTimerOf(localPort: number): Promise<number | undefined> {
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(file, 'utf8')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (!local || Number.parseInt(local.split(':')[1] ?? '', 16) !== localPort) continue;
      // "tr:tm->when": 0 no timer, 1 retransmit, 2 keepalive, 3 TIME_WAIT, 4 zero-window probe.
      return Number.parseInt((fields[5] ?? '').split(':')[0] ?? '', 16);
    }
  }
  return undefined;
}

const until = async (condition: () => boolean | Promise<boolean>): Promise<void> => {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
};

describe('PostgreSQL timeouts and keepalive', () => {
  const schemas: string[] = [];
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });

  const open = async (options: Parameters<typeof openDatabase>[0] = {}): Promise<Database> => {
    const schema = uniqueName('db_timeouts');
    schemas.push(schema);
    const database = await openDatabase({ url: testDatabaseUrl(), schema, ...options });
    cleanups.push(() => database.close());
    return database;
  };

  test('pooled connections have TCP keepalive armed', async () => {
    const database = await open({ timeouts: { keepAliveMs: 60_000 } });
    const { rows } = await sql<{ port: number }>`SELECT inet_client_port() AS port`.execute(database.db);
    const port = Number(rows[0]!.port);
    // The connection is idle in the pool now: with keepalive on, the kernel's keepalive timer runs.
    expect(await tcpTimerOf(port)).toBe(2);
  });

  test("a commit waiting on another session's lock fails with a lock timeout instead of waiting forever", async () => {
    const database = await open({ timeouts: { lockMs: 200 } });
    const store = await PostgresEventStore.open(database);
    cleanups.push(() => store.close());
    const other = new pg.Client({ connectionString: testDatabaseUrl() });
    await other.connect();
    cleanups.push(() => other.end());
    // Another session holds the store's append lock (a stuck writer, an operator's session).
    await other.query('SELECT pg_advisory_lock($1, $2)', [APPEND_LOCK_NAMESPACE, store.eventsTableOid]);

    await expect(store.append('stream-1', [{ type: 'Happened', data: {} }])).rejects.toThrow(/lock timeout/);

    await other.query('SELECT pg_advisory_unlock($1, $2)', [APPEND_LOCK_NAMESPACE, store.eventsTableOid]);
    await expect(store.append('stream-1', [{ type: 'Happened', data: {} }])).resolves.toBeDefined();
  });

  test('a statement running past the statement timeout is cancelled', async () => {
    const database = await open({ timeouts: { statementMs: 200 } });
    await expect(sql`SELECT pg_sleep(30)`.execute(database.db)).rejects.toThrow(/statement timeout/);
  });

  test('migrations are exempt: one running past the statement timeout still applies', async () => {
    const database = await open({ timeouts: { statementMs: 100, lockMs: 100 } });
    const slow = { name: '0001-slow', up: async (trx: Trx) => void (await sql`SELECT pg_sleep(0.3)`.execute(trx)) };
    expect(await migrate(database.db, [slow], 'slow_migrations')).toEqual(['0001-slow']);
  });

  test('a leader whose heartbeat hangs gives the lock up, and a standby gets it', async () => {
    const proxy = await freezableProxy(new URL(testDatabaseUrl()));
    cleanups.push(() => proxy.close());
    const schema = uniqueName('db_timeouts');
    schemas.push(schema);
    const viaProxy = await openDatabase({ url: proxy.url, schema, timeouts: { sessionMs: 300 } });
    cleanups.push(() => viaProxy.close());
    const direct = await open();
    const keys = [randomInt(1, 2 ** 31 - 1), randomInt(1, 2 ** 31 - 1)] as const;
    const leader = new SessionAdvisoryLock(viaProxy, keys, 20);
    const standby = new SessionAdvisoryLock(direct, keys, 20);
    cleanups.push(
      () => leader.release(),
      () => standby.release(),
    );
    expect(await leader.tryAcquire()).toBe(true);
    expect(await standby.tryAcquire()).toBe(false);

    proxy.freeze();

    await until(() => !leader.isHeld());
    // The leader closed its connection, so the server dropped the lock.
    await until(() => standby.tryAcquire());
    expect(standby.isHeld()).toBe(true);
    expect(leader.isHeld()).toBe(false);
  });
});
