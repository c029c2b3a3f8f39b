import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type Database } from '@weft/event-store';

/**
 * Distributed mode, as deployed: the gateway's built dist/main.js on PostgreSQL and NATS. Its
 * output is what a log collector keeps, so a generated system key goes to its file (0600) only.
 */
const mainJs = resolve(__dirname, '../dist/main.js');
const adminUrl = process.env.WEFT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/weft_test';
const natsUrl = process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

describe('the gateway process in distributed mode', () => {
  const databaseName = `weft_bootstrap_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let admin: Database;
  let dataDir: string;
  let child: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    admin = await openDatabase({ url: adminUrl });
    await sql.raw(`CREATE DATABASE ${databaseName}`).execute(admin.db);
    dataDir = await mkdtemp(join(tmpdir(), 'weft-bootstrap-'));
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((done) => child!.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    }
    await sql.raw(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).execute(admin.db);
    await admin.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('a generated system key is written to its file only; the output names the file, never the key', async () => {
    const url = new URL(adminUrl);
    url.pathname = `/${databaseName}`;
    child = spawn(process.execPath, [mainJs], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        WEFT_PORT: '0',
        WEFT_HOST: '127.0.0.1',
        WEFT_DATA_DIR: dataDir,
        WEFT_DATABASE_URL: url.toString(),
        WEFT_NATS_URL: natsUrl,
        WEFT_SECRET_KEY: 'bootstrap-output-test-secret',
        WEFT_BOOTSTRAP_API_KEY: '',
      },
      stdio: 'pipe',
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // Started once it says where it wrote the key (or it exited).
    await new Promise<void>((done, fail) => {
      const check = setInterval(() => {
        if (output.includes('bootstrap-api-key')) {
          clearInterval(check);
          done();
        }
      }, 50);
      child!.once('exit', (code) => {
        clearInterval(check);
        fail(new Error(`gateway exited with ${code}:\n${output}`));
      });
    });
    const keyFile = join(dataDir, 'bootstrap-api-key');
    const key = (await readFile(keyFile, 'utf8')).trim();
    expect(key).toMatch(/^weft_[A-Za-z0-9_-]{43}$/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(output).toContain(keyFile);
    expect(output).not.toContain(key);
    expect(output).not.toContain(key.slice(5, 25));
  });
});
