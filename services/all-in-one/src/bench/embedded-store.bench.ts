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
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runLoad } from '@weft/engine/bench';
import { WEFT_EMBEDDED_NODE_FLAGS } from '@weft/test-support';
import { benchClient, startedBenchProcess } from './webhook-bench-process.js';
import { descendants } from './process-tree.js';

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

async function startServer(dataDir: string): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'main.js');
  const child = spawn(process.execPath, [...WEFT_EMBEDDED_NODE_FLAGS, main], {
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
    const call = benchClient(server.url, KEY);
    const org = await call('POST', '/api/v1/organizations', { name: 'Bench' });
    const processId = await startedBenchProcess(call, String(org.body?.id), true);
    const webhook = `/api/v1/processes/${processId}/webhook`;
    for (let i = 0; i < 50; i++) await call('POST', webhook, { amount: i });
    for (const concurrency of CONCURRENCY) {
      const before = sample(server.pid);
      const result = await runLoad(
        concurrency,
        SECONDS_PER_LEVEL,
        async (i) => (await call('POST', webhook, { amount: i % 2 === 0 ? 50 : 150 })).status === 200,
      );
      const seconds = result.seconds;
      const after = sample(server.pid);
      const share = (value: number): string => (value / seconds).toFixed(2);
      rows.push([
        String(concurrency),
        result.rate.toFixed(0),
        String(result.failures),
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
