/**
 * Webhook benchmark over HTTP, embedded (PGlite + in-memory bus) and distributed (PostgreSQL +
 * NATS on loopback, every service in this process): the engine benchmark's 5-node process behind
 * a webhook input node, with Return to Client (200 with its output) and without (202 at once), at
 * concurrency 1, 10 and 50. Prints requests/s, p50/p99/max, errors and RSS; asserts nothing.
 * Run: pnpm bench webhook [--mode=embedded|distributed] [--quick]
 * Distributed uses WEFT_BENCH_NATS_URL (else WEFT_TEST_NATS_URL, else nats://127.0.0.1:4222) and
 * a fresh database on WEFT_BENCH_DATABASE_URL (else WEFT_TEST_DATABASE_URL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@weft/config';
import pg from 'pg';
import { ms, percentile, printTable, runLoad, type LoadResult } from '@weft/engine/bench';
import { startWeft, type RunningWeft } from '../weft-runtime.js';
import { benchClient, startedBenchProcess, type BenchCall } from './webhook-bench-process.js';

type Mode = 'embedded' | 'distributed';
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const modeArg = args.find((arg) => arg.startsWith('--mode='))?.slice('--mode='.length);
const modes: Mode[] = modeArg === 'embedded' || modeArg === 'distributed' ? [modeArg] : ['embedded', 'distributed'];
const SECONDS_PER_LEVEL = quick ? 2 : 5;
const CONCURRENCY = [1, 10, 50];
const KEY = `weft_bench_${randomUUID().replace(/-/g, '')}`;
const rows: string[][] = [];

async function level(call: BenchCall, processId: string, expected: number, concurrency: number): Promise<LoadResult> {
  return runLoad(concurrency, SECONDS_PER_LEVEL, async (i) => {
    const answer = await call('POST', `/api/v1/processes/${processId}/webhook`, { amount: i % 2 === 0 ? 50 : 150 });
    return answer.status === expected;
  });
}

async function openWeft(mode: Mode): Promise<{ weft: RunningWeft; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'weft-webhook-bench-'));
  const env: Record<string, string> = {
    WEFT_PORT: '0',
    WEFT_DATA_DIR: dataDir,
    WEFT_BOOTSTRAP_API_KEY: KEY,
    WEFT_LOG_LEVEL: 'warn',
  };
  let dropDatabase = async (): Promise<void> => undefined;
  if (mode === 'distributed') {
    const base =
      process.env.WEFT_BENCH_DATABASE_URL ??
      process.env.WEFT_TEST_DATABASE_URL ??
      'postgres://postgres@127.0.0.1:5432/weft_test';
    const name = `weft_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const admin = async (statement: string): Promise<void> => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(statement).finally(() => client.end());
    };
    await admin(`CREATE DATABASE ${name}`);
    dropDatabase = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    env.WEFT_DATABASE_URL = base.replace(/\/[^/]*$/, `/${name}`);
    env.WEFT_NATS_URL = process.env.WEFT_BENCH_NATS_URL ?? process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
    env.WEFT_SECRET_KEY = 'weft-bench-secret-key-0123456789';
  }
  const weft = await startWeft(loadConfig({ ...process.env, ...env, WEFT_HOST: '127.0.0.1' }));
  return {
    weft,
    async close() {
      await weft.stop();
      await dropDatabase();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function bench(mode: Mode): Promise<void> {
  const opened = await openWeft(mode);
  const call = benchClient(opened.weft.url, KEY);
  try {
    const org = await call('POST', '/api/v1/organizations', { name: 'Bench' });
    for (const [variant, returnToClient, expected] of [
      ['Return to Client (200)', true, 200],
      ['no Return to Client (202)', false, 202],
    ] as const) {
      const processId = await startedBenchProcess(call, String(org.body?.id), returnToClient);
      for (let i = 0; i < 50; i++) await call('POST', `/api/v1/processes/${processId}/webhook`, { amount: i });
      for (const concurrency of CONCURRENCY) {
        const result = await level(call, processId, expected, concurrency);
        rows.push([
          mode,
          variant,
          String(concurrency),
          result.rate.toFixed(0),
          ms(percentile(result.sortedMs, 0.5)),
          ms(percentile(result.sortedMs, 0.99)),
          ms(result.sortedMs.at(-1) ?? 0),
          `${result.failures}/${result.count}`,
          `${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MiB`,
        ]);
      }
    }
  } finally {
    await opened.close();
  }
}

for (const mode of modes) await bench(mode);
printTable(
  `Webhook throughput (${SECONDS_PER_LEVEL} s per level, one process, keep-alive fetch)`,
  ['mode', 'webhook', 'concurrency', 'requests/s', 'p50', 'p99', 'max', 'errors', 'RSS'],
  rows,
);
process.exit(0);
