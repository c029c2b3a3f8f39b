import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type WeftConfig } from '@weft/config';
import { sql } from 'kysely';
import {
  clusterDirectory,
  EmbeddedPostgresError,
  openConfiguredDatabase,
  startConfiguredEmbeddedPostgres,
} from '../src/index.js';
import { socketDirectoryFor } from '../src/embedded-postgres/socket-directory.js';

/** The embedded store is a real PostgreSQL child process: durable, restartable, and stopped with Weft. */
const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('embedded PostgreSQL', () => {
  let dir: string;
  const configFor = (dataDir: string): WeftConfig => loadConfig({ WEFT_DATA_DIR: dataDir });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-embedded-pg-'));
    // Folders made inside it must be reachable by the postgres OS user when the tests run as root.
    await chmod(dir, 0o755);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('every commit is durable: fsync, synchronous_commit and full_page_writes are on, no TCP port', async () => {
    const database = await openConfiguredDatabase(configFor(dir));
    try {
      const show = async (name: string) =>
        (await sql.raw<Record<string, string>>(`SHOW ${name}`).execute(database.db)).rows[0]![name];
      expect(await show('fsync')).toBe('on');
      expect(await show('synchronous_commit')).toBe('on');
      expect(await show('full_page_writes')).toBe('on');
      expect(await show('listen_addresses')).toBe('');
      expect(database.dialect).toBe('postgres');
    } finally {
      await database.close();
    }
  });

  test('a restart keeps committed rows, and stopping Weft stops the server', async () => {
    const server = await startConfiguredEmbeddedPostgres(configFor(dir));
    const pid = server.pid;
    await server.stop();
    expect(running(pid)).toBe(false);

    const first = await openConfiguredDatabase(configFor(dir));
    await sql`CREATE TABLE kept (n int)`.execute(first.db);
    await sql`INSERT INTO kept SELECT generate_series(1, 100)`.execute(first.db);
    await first.close();

    const second = await openConfiguredDatabase(configFor(dir));
    try {
      const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM kept`.execute(second.db);
      expect(Number(rows.rows[0]!.n)).toBe(100);
    } finally {
      await second.close();
    }
  });

  test('a second server on a data dir in use is refused with a message', async () => {
    const server = await startConfiguredEmbeddedPostgres(configFor(dir));
    try {
      const config = loadConfig({ WEFT_DATA_DIR: dir, WEFT_EMBEDDED_PG_STOP_TIMEOUT_MS: '1000' });
      await expect(startConfiguredEmbeddedPostgres(config)).rejects.toThrow(/another Weft uses this WEFT_DATA_DIR/);
    } finally {
      await server.stop();
    }
  });

  test('a data dir too long for a unix socket path puts the socket in a short folder of its own', async () => {
    const deep = join(dir, 'a-rather-long-folder-name-'.repeat(4), 'weft-data');
    expect(socketDirectoryFor(deep)).not.toContain(deep);
    const database = await openConfiguredDatabase(configFor(deep));
    try {
      const rows = await sql<{ one: number }>`SELECT 1 AS one`.execute(database.db);
      expect(rows.rows[0]!.one).toBe(1);
    } finally {
      await database.close();
    }
    await rm(socketDirectoryFor(deep), { recursive: true, force: true });
  });

  test('a PGlite data dir from an earlier Weft is not ignored: the message names the migration command', async () => {
    await mkdir(join(dir, 'pgdata'), { recursive: true });
    execFileSync('sh', ['-c', `echo 18 > ${join(dir, 'pgdata', 'PG_VERSION')}`]);
    await expect(openConfiguredDatabase(configFor(dir))).rejects.toThrow(/pnpm migrate-embedded/);
  });

  const asRoot = process.getuid?.() === 0 ? test : test.skip;
  asRoot('as root, a data dir the postgres OS user cannot reach fails with a message saying what to do', async () => {
    const closed = join(dir, 'private');
    await mkdir(closed, { mode: 0o700 });
    await chmod(closed, 0o700);
    const error = await openConfiguredDatabase(configFor(join(closed, 'weft'))).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EmbeddedPostgresError);
    expect((error as Error).message).toContain(`${closed} is mode 700`);
    expect((error as Error).message).toContain('WEFT_DATA_DIR');
  });

  asRoot('as root, the cluster belongs to the postgres OS user and the server does not run as root', async () => {
    const server = await startConfiguredEmbeddedPostgres(configFor(dir));
    try {
      const owner = execFileSync('stat', ['-c', '%U', clusterDirectory(dir)])
        .toString()
        .trim();
      const user = execFileSync('ps', ['-o', 'user=', '-p', String(server.pid)])
        .toString()
        .trim();
      expect(owner).toBe('postgres');
      expect(user).toBe('postgres');
    } finally {
      await server.stop();
    }
  });
});
