/**
 * Embedded store benchmark: starts `node services/all-in-one/dist/main.js` (what `make start` runs)
 * in a fresh data dir, drives the engine benchmark's 5-node process through its webhook over HTTP
 * (Return to Client) at concurrency 1, 10 and 50, and samples /proc for the CPU of the Node main
 * thread, the whole Node process and its child processes (the embedded PostgreSQL).
 * Prints one table; asserts nothing. Linux only (/proc).
 * Run: node services/all-in-one/dist/bench/embedded-store.bench.js [--quick]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const quick = process.argv.includes('--quick');
const SECONDS_PER_LEVEL = quick ? 3 : 8;
const CONCURRENCY = [1, 10, 50];
const KEY = `weft_bench_${randomUUID().replace(/-/g, '')}`;
const CLOCK_TICKS = 100;

/** utime + stime in seconds from a /proc stat line (fields 14 and 15, after the command name). */
function cpuSeconds(statPath: string): number {
  try {
    const fields = readFileSync(statPath, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const parent = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process ended meanwhile
    }
  }
  const found: number[] = [];
  const walk = (id: number): void => {
    for (const child of children.get(id) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

interface CpuSample {
  mainThread: number;
  process: number;
  children: number;
}

function sample(pid: number): CpuSample {
  return {
    mainThread: cpuSeconds(`/proc/${pid}/task/${pid}/stat`),
    process: cpuSeconds(`/proc/${pid}/stat`),
    children: descendants(pid).reduce((sum, child) => sum + cpuSeconds(`/proc/${child}/stat`), 0),
  };
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: { id?: string } }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as { id?: string } };
}

const fiveNodeGraph = {
  nodes: [
    { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
    {
      id: 'check',
      type: 'conditionalNode',
      config: {
        label: 'Big',
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["amount"]}}', operator: 'gt', right: 100 }],
      },
    },
    { id: 'big', type: 'scriptNode', config: { label: 'Discount', code: 'return { total: input.In.amount * 0.9 };' } },
    { id: 'small', type: 'scriptNode', config: { label: 'Fee', code: 'return { total: input.In.amount + 5 };' } },
    {
      id: 'out',
      type: 'outputNode',
      config: {
        label: 'Result',
        returnToClient: true,
        fields: { big: '{{input["Discount"]["total"]}}', small: '{{input["Fee"]["total"]}}' },
      },
    },
  ],
  edges: [
    { source_node_id: 'in', target_node_id: 'check' },
    { source_node_id: 'check', target_node_id: 'big', source_handle: 'true' },
    { source_node_id: 'check', target_node_id: 'small', source_handle: 'false' },
    { source_node_id: 'big', target_node_id: 'out' },
    { source_node_id: 'small', target_node_id: 'out' },
  ],
};

async function startServer(dataDir: string): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'main.js');
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      WEFT_PORT: '0',
      WEFT_HOST: '127.0.0.1',
      WEFT_DATA_DIR: dataDir,
      WEFT_BOOTSTRAP_API_KEY: KEY,
      WEFT_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /running \([^)]*\) at (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`weft exited (${code}) before it was ready: ${output}`)));
  });
  return {
    pid: child.pid!,
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'weft-store-bench-'));
  const startedAt = performance.now();
  const server = await startServer(dataDir);
  const startupMs = performance.now() - startedAt;
  const rows: string[][] = [];
  try {
    const org = await call(server.url, 'POST', '/api/v1/organizations', { name: 'Bench' });
    const created = await call(server.url, 'POST', `/api/v1/processes/by-org/${org.body.id!}`, {
      name: 'bench',
      ...fiveNodeGraph,
    });
    if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
    await call(server.url, 'POST', `/api/v1/processes/start/${created.body.id!}`);
    const webhook = `/api/v1/processes/${created.body.id!}/webhook`;
    for (let i = 0; i < 50; i++) await call(server.url, 'POST', webhook, { amount: i });
    for (const concurrency of CONCURRENCY) {
      let count = 0;
      let errors = 0;
      const before = sample(server.pid);
      const t0 = performance.now();
      const end = t0 + SECONDS_PER_LEVEL * 1000;
      await Promise.all(
        Array.from({ length: concurrency }, async (_, worker) => {
          for (let i = worker; performance.now() < end; i += concurrency) {
            const answer = await call(server.url, 'POST', webhook, { amount: i % 2 === 0 ? 50 : 150 }).catch(() => ({
              status: 0,
            }));
            count++;
            if (answer.status !== 200) errors++;
          }
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      const after = sample(server.pid);
      const share = (value: number): string => (value / seconds).toFixed(2);
      rows.push([
        String(concurrency),
        (count / seconds).toFixed(0),
        String(errors),
        share(after.mainThread - before.mainThread),
        share(after.process - before.process),
        share(after.children - before.children),
      ]);
    }
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(`embedded store benchmark (${quick ? 'quick' : 'full'}), start-up ${startupMs.toFixed(0)} ms`);
  console.log('concurrency | executions/s | errors | main thread CPU | Node process CPU | child processes CPU');
  for (const row of rows) console.log(row.join(' | '));
  console.log('(CPU in cores: CPU seconds per wall-clock second; the load generator runs in another process)');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
