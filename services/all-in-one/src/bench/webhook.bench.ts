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
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@weft/config';
import pg from 'pg';
import { startWeft, type RunningWeft } from '../weft-runtime.js';

type Mode = 'embedded' | 'distributed';
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const modeArg = args.find((arg) => arg.startsWith('--mode='))?.slice('--mode='.length);
const modes: Mode[] = modeArg === 'embedded' || modeArg === 'distributed' ? [modeArg] : ['embedded', 'distributed'];
const SECONDS_PER_LEVEL = quick ? 2 : 5;
const CONCURRENCY = [1, 10, 50];
const KEY = `weft_bench_${randomUUID().replace(/-/g, '')}`;
const rows: string[][] = [];

const percentile = (sorted: number[], fraction: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

/** input (webhook) -> conditional -> (script | script) -> output: the engine benchmark's process. */
function fiveNodeGraph(returnToClient: boolean) {
  const node = (id: string, type: string, config: Record<string, unknown>) => ({ id, type, config });
  return {
    nodes: [
      node('in', 'inputNode', { label: 'In', triggerType: 'webhook' }),
      node('check', 'conditionalNode', {
        label: 'Big',
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["amount"]}}', operator: 'gt', right: 100 }],
      }),
      node('big', 'scriptNode', { label: 'Discount', code: 'return { total: input.In.amount * 0.9 };' }),
      node('small', 'scriptNode', { label: 'Fee', code: 'return { total: input.In.amount + 5 };' }),
      node('out', 'outputNode', {
        label: 'Result',
        returnToClient,
        fields: { big: '{{input["Discount"]["total"]}}', small: '{{input["Fee"]["total"]}}' },
      }),
    ],
    edges: [
      { source_node_id: 'in', target_node_id: 'check' },
      { source_node_id: 'check', target_node_id: 'big', source_handle: 'true' },
      { source_node_id: 'check', target_node_id: 'small', source_handle: 'false' },
      { source_node_id: 'big', target_node_id: 'out' },
      { source_node_id: 'small', target_node_id: 'out' },
    ],
  };
}

async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: { id?: string } | undefined }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-api-key': KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as { id?: string }) : undefined };
}

async function startedProcess(weft: RunningWeft, organizationId: string, returnToClient: boolean): Promise<string> {
  const created = await call(weft.url, 'POST', `/api/v1/processes/by-org/${organizationId}`, {
    name: `bench-${returnToClient ? 'sync' : 'async'}`,
    ...fiveNodeGraph(returnToClient),
  });
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const started = await call(weft.url, 'POST', `/api/v1/processes/start/${created.body?.id ?? ''}`);
  if (started.status !== 200) throw new Error(`start failed: ${JSON.stringify(started.body)}`);
  return String(created.body?.id);
}

async function level(weft: RunningWeft, processId: string, expected: number, concurrency: number) {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + SECONDS_PER_LEVEL * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = worker; performance.now() < end; i += concurrency) {
        const t0 = performance.now();
        const answer = await call(weft.url, 'POST', `/api/v1/processes/${processId}/webhook`, {
          amount: i % 2 === 0 ? 50 : 150,
        }).catch(() => ({ status: 0 }));
        latencies.push(performance.now() - t0);
        if (answer.status !== expected) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  return { rate: latencies.length / seconds, sorted, errors, count: latencies.length };
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
  const { weft } = opened;
  try {
    const org = await call(weft.url, 'POST', '/api/v1/organizations', { name: 'Bench' });
    for (const [variant, returnToClient, expected] of [
      ['Return to Client (200)', true, 200],
      ['no Return to Client (202)', false, 202],
    ] as const) {
      const processId = await startedProcess(weft, String(org.body?.id), returnToClient);
      for (let i = 0; i < 50; i++)
        await call(weft.url, 'POST', `/api/v1/processes/${processId}/webhook`, { amount: i });
      for (const concurrency of CONCURRENCY) {
        const result = await level(weft, processId, expected, concurrency);
        rows.push([
          mode,
          variant,
          String(concurrency),
          result.rate.toFixed(0),
          ms(percentile(result.sorted, 0.5)),
          ms(percentile(result.sorted, 0.99)),
          ms(result.sorted.at(-1) ?? 0),
          `${result.errors}/${result.count}`,
          `${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MiB`,
        ]);
      }
    }
  } finally {
    await opened.close();
  }
}

for (const mode of modes) await bench(mode);
const header = ['mode', 'webhook', 'concurrency', 'requests/s', 'p50', 'p99', 'max', 'errors', 'RSS'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
const line = (cells: string[]): string => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\nWebhook throughput (${SECONDS_PER_LEVEL} s per level, one process, keep-alive fetch)`);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const row of rows) console.log(line(row));
process.exit(0);
