import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { BOOTSTRAP_KEY, client, removeDir, tempDataDir } from './weft-harness.js';

/**
 * `make start`'s process (dist/main.js) killed with SIGKILL, and stopped with SIGTERM, while it
 * answers webhooks and edits: every execution and edit it acknowledged is there after a restart,
 * and its embedded PostgreSQL never outlives it.
 */
const root = resolve(__dirname, '../../..');
const main = join(root, 'services/all-in-one/dist/main.js');

interface MainProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

async function startMain(dataDir: string): Promise<MainProcess> {
  const child = spawn(process.execPath, [main], {
    cwd: root,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      WEFT_PORT: '0',
      WEFT_HOST: '127.0.0.1',
      WEFT_DATA_DIR: dataDir,
      WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      WEFT_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let output = '';
  const url = await new Promise<string>((done, fail) => {
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /running \([^)]*\) at (http:\/\/\S+)/.exec(output);
      if (match) done(match[1]!);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    void exited.then((code) => fail(new Error(`weft exited (${code}) before it was ready: ${output}`)));
  });
  return { child, url, exited };
}

const serverPid = (dataDir: string): number =>
  Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls until the process is gone; the kernel's parent-death signal makes that a fast shutdown. */
async function gone(pid: number): Promise<boolean> {
  for (let tries = 0; tries < 600 && alive(pid); tries += 1) await new Promise((done) => setTimeout(done, 100));
  return !alive(pid);
}

const echoProcess = {
  name: 'Echo',
  nodes: [
    { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
    {
      id: 'out',
      type: 'outputNode',
      config: { label: 'Out', returnToClient: true, fields: { n: '{{input["In"]["n"]}}' } },
    },
  ],
  edges: [{ source_node_id: 'in', target_node_id: 'out' }],
};

/** Webhook runs and process creations from 16 callers until `stopAfter` runs were answered; then the caller kills. */
async function load(
  url: string,
  processId: string,
  organizationId: string,
  kill: () => void,
  stopAfter: number,
): Promise<{ executions: number[]; processes: string[] }> {
  const as = client(url, BOOTSTRAP_KEY);
  const executions: number[] = [];
  const processes: string[] = [];
  let next = 0;
  let killed = false;
  await Promise.all(
    Array.from({ length: 16 }, async (_, worker) => {
      while (!killed) {
        const n = next++;
        try {
          if (worker % 4 === 0) {
            const created = await as('POST', `/api/v1/processes/by-org/${organizationId}`, { name: `p${n}` });
            if (created.status === 201) processes.push(created.body.id as string);
          } else {
            const answer = await as('POST', `/api/v1/processes/${processId}/webhook`, { n });
            if (answer.status === 200 && answer.body.n === n) executions.push(n);
          }
        } catch {
          return; // the server is gone: this request was never acknowledged
        }
        if (!killed && executions.length >= stopAfter) {
          killed = true;
          kill();
        }
      }
    }),
  );
  return { executions, processes };
}

/** The webhook inputs of completed executions, read from the running Weft's embedded PostgreSQL. */
async function completedInputs(dataDir: string, processId: string): Promise<Set<number>> {
  const socketDir = join(dataDir, 'run');
  const database = new pg.Client({ connectionString: `postgres://postgres@localhost/postgres?host=${socketDir}` });
  await database.connect();
  try {
    const rows = await database.query<{ n: string }>(
      `SELECT (input_data::jsonb)->>'n' AS n FROM engine_executions WHERE process_id = $1 AND status = 'completed'`,
      [processId],
    );
    return new Set(rows.rows.map((row) => Number(row.n)));
  } finally {
    await database.end();
  }
}

describe('embedded Weft killed or stopped under load', () => {
  let dataDir: string;
  let running: MainProcess | undefined;
  beforeAll(async () => {
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`pnpm build\` before the e2e tests`);
    dataDir = await tempDataDir();
  });
  afterAll(async () => {
    running?.child.kill('SIGTERM');
    await running?.exited;
    await removeDir(dataDir);
  });

  test('SIGKILL, then SIGTERM: nothing acknowledged is lost and no PostgreSQL is left running', async () => {
    running = await startMain(dataDir);
    const as = client(running.url, BOOTSTRAP_KEY);
    const org = (await as('POST', '/api/v1/organizations', { name: 'Durable' })).body.id as string;
    const processId = (await as('POST', `/api/v1/processes/by-org/${org}`, echoProcess)).body.id as string;
    expect((await as('POST', `/api/v1/processes/start/${processId}`)).status).toBe(200);
    const acknowledged = { executions: [] as number[], processes: [] as string[] };

    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      const postgres = serverPid(dataDir);
      const current: MainProcess = running;
      const answered = await load(current.url, processId, org, () => current.child.kill(signal), 100);
      acknowledged.executions.push(...answered.executions);
      acknowledged.processes.push(...answered.processes);
      const code = await current.exited;
      if (signal === 'SIGTERM') expect(code).toBe(0);
      expect(await gone(postgres)).toBe(true);

      running = await startMain(dataDir);
      const found = await completedInputs(dataDir, processId);
      expect(acknowledged.executions.filter((n) => !found.has(n))).toEqual([]);
      const after = client(running.url, BOOTSTRAP_KEY);
      const missing: string[] = [];
      for (const id of acknowledged.processes) {
        if ((await after('GET', `/api/v1/processes/by-id/${id}`)).status !== 200) missing.push(id);
      }
      expect(missing).toEqual([]);
    }
    expect(acknowledged.executions.length).toBeGreaterThanOrEqual(200);
    const last = serverPid(dataDir);
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    running = undefined;
    expect(await gone(last)).toBe(true);
  }, 240_000);
});
