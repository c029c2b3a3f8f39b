import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '@weft/config';
import { openDatabase } from '@weft/event-store';
import { pgliteDir } from '@weft/runtime';
import { sql } from 'kysely';
import { startWeft, type RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client, removeDir, tempDataDir } from './weft-harness.js';

/**
 * A data dir written by Weft before issue 13 (PGlite in `<dataDir>/pgdata`) is not lost: the next
 * start, or `pnpm migrate-embedded`, copies its events (and other tables) into the embedded
 * PostgreSQL and rebuilds the read models; every answer is the same afterwards.
 */
const root = resolve(__dirname, '../../..');
const configFor = (dataDir: string) =>
  loadConfig({ WEFT_PORT: '0', WEFT_HOST: '127.0.0.1', WEFT_DATA_DIR: dataDir, WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });

/** Weft as it ran before: the same composition on PGlite in `<dataDir>/pgdata`. */
const startOnPglite = (dataDir: string): Promise<RunningWeft> =>
  startWeft(configFor(dataDir), { database: async () => openDatabase({ dataDir: pgliteDir(dataDir) }) });

const doubler = {
  name: 'Doubler',
  nodes: [
    { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
    { id: 'twice', type: 'scriptNode', config: { label: 'Twice', code: 'return { doubled: input.In.n * 2 };' } },
  ],
  edges: [{ source_node_id: 'in', target_node_id: 'twice' }],
};

/** Writes data through the HTTP API on the old store and returns what its read endpoints answer. */
async function seed(weft: RunningWeft): Promise<{ paths: string[]; processId: string }> {
  const as = client(weft.url, BOOTSTRAP_KEY);
  const org = (await as('POST', '/api/v1/organizations', { name: 'Before 13' })).body.id as string;
  const processId = (await as('POST', `/api/v1/processes/by-org/${org}`, doubler)).body.id as string;
  expect((await as('POST', `/api/v1/processes/versions/${processId}`, { label: 'v1' })).status).toBe(201);
  const executions: string[] = [];
  for (const n of [1, 2, 3]) {
    const run = await as('POST', `/api/v1/processes/test/${processId}`, { n });
    expect(run.status).toBe(200);
    executions.push(run.body.id as string);
  }
  return {
    processId,
    paths: [
      `/api/v1/processes/by-id/${processId}`,
      `/api/v1/processes/by-org/${org}`,
      `/api/v1/processes/versions/${processId}`,
      `/api/v1/processes/executions/${processId}`,
      ...executions.map((id) => `/api/v1/processes/execution/${id}`),
    ],
  };
}

const answers = async (weft: RunningWeft, paths: string[]) => {
  const as = client(weft.url, BOOTSTRAP_KEY);
  return Promise.all(paths.map(async (path) => [path, await as('GET', path)] as const));
};

const eventCount = async (weft: RunningWeft): Promise<number> =>
  Number((await sql<{ n: string }>`SELECT count(*) AS n FROM events`.execute(weft.store.db)).rows[0]!.n);

describe('a PGlite data dir from before the embedded PostgreSQL', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDataDir();
  });
  afterEach(async () => {
    await removeDir(dataDir);
  });

  test('is migrated on start, progress printed: same answers, same events, and it keeps working', async () => {
    const before = await startOnPglite(dataDir);
    const { paths, processId } = await seed(before);
    const expected = await answers(before, paths);
    const events = await eventCount(before);
    await before.stop();

    const progress: string[] = [];
    const after = await startWeft(configFor(dataDir), { report: (line) => progress.push(line) });
    try {
      expect(await answers(after, paths)).toEqual(expected);
      expect(await eventCount(after)).toBe(events);
      expect(progress.join('\n')).toMatch(/events: \d+ rows[\s\S]*rebuilding the read models/);
      expect(existsSync(pgliteDir(dataDir))).toBe(false);
      expect(existsSync(`${pgliteDir(dataDir)}.migrated`)).toBe(true);
      // New events continue after the copied positions.
      const run = await client(after.url, BOOTSTRAP_KEY)('POST', `/api/v1/processes/test/${processId}`, { n: 21 });
      expect(run).toMatchObject({ status: 200, body: { status: 'completed' } });
      const positions = await sql<{ fresh: string }>`
        SELECT count(*) AS fresh FROM events WHERE position > ${events}`.execute(after.store.db);
      expect(Number(positions.rows[0]!.fresh)).toBe((await eventCount(after)) - events);
    } finally {
      await after.stop();
    }
  }, 120_000);

  test('`pnpm migrate-embedded` migrates it without starting Weft', async () => {
    const before = await startOnPglite(dataDir);
    const { paths } = await seed(before);
    const expected = await answers(before, paths);
    await before.stop();

    const command = spawn('pnpm', ['--silent', 'migrate-embedded'], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '', WEFT_DATA_DIR: dataDir, WEFT_LOG_LEVEL: 'warn' },
    });
    let output = '';
    command.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    command.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((done) => command.once('close', done));
    expect({ code, output }).toMatchObject({ code: 0, output: expect.stringContaining('done;') });

    const progress: string[] = [];
    const after = await startWeft(configFor(dataDir), { report: (line) => progress.push(line) });
    try {
      expect(progress).toEqual([]);
      expect(await answers(after, paths)).toEqual(expected);
    } finally {
      await after.stop();
    }
  }, 120_000);
});
