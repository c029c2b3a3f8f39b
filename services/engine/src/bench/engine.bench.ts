/**
 * The engine's in-process benchmark (the engine alone: no HTTP layer, no process catalog; what a
 * user sees is `pnpm bench engine`, services/all-in-one/src/bench/engine-http.bench.ts), embedded
 * (PGlite + in-memory bus) and distributed (PostgreSQL + NATS on loopback): (a) executions/s and
 * p50/p99 of a 5-node process through POST /processes/test at concurrency 1, 10, 50; (b) engine
 * overhead per node on a 200-node chain and fan-out; (c) history page latency with 1,000,000
 * stored executions; (d) RSS with 10,000 executions parked in wait nodes; (e) execution-stats
 * latency with 1,000,000 executions of the process. Prints tables; asserts nothing.
 * Run: pnpm bench engine --internals [--mode=embedded|distributed] [--quick] (after the HTTP
 * tables), or node services/engine/dist/bench/engine.bench.js [--mode=...] [--quick]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { sql } from 'kysely';
import { chainProcess, fanOutProcess, fiveNodeProcess, parkedProcess } from './bench-processes.js';
import { openBenchStack, type BenchMode, type BenchStack } from './bench-stack.js';
import { executionStatsLatency } from './execution-stats.bench-section.js';
import { ms, percentile, printTable } from './latency-stats.js';
import { runLoad } from './load-loop.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const modeArg = args.find((arg) => arg.startsWith('--mode='))?.slice('--mode='.length);
const modes: BenchMode[] =
  modeArg === 'embedded' || modeArg === 'distributed' ? [modeArg] : ['embedded', 'distributed'];

const SECONDS_PER_LEVEL = quick ? 2 : 5;
const CONCURRENCY = [1, 10, 50];
const GRAPH_SIZE = 200;
const GRAPH_RUNS = quick ? 3 : 10;
const HISTORY_ROWS = quick ? 100_000 : 1_000_000;
const HISTORY_QUERIES = 50;
const PARKED = quick ? 1_000 : 10_000;

const throughputRows: string[][] = [];
const overheadRows: string[][] = [];
const historyRows: string[][] = [];
const memoryRows: string[][] = [];
const statsRows: string[][] = [];

const sorted = (values: number[]): number[] => [...values].sort((a, b) => a - b);

async function throughput(stack: BenchStack): Promise<void> {
  const org = randomUUID();
  const process_ = fiveNodeProcess(org);
  stack.processes.set(process_.id, process_);
  const actor = stack.actor(org);
  const once = async (i: number): Promise<boolean> => {
    const reply = await stack.testProcess(process_.id, { amount: i % 2 === 0 ? 50 : 150 }, actor);
    return reply.status === 200 && (reply.body as ExecutionRecord).status === 'completed';
  };
  for (let i = 0; i < 50; i++) await once(i);
  for (const concurrency of CONCURRENCY) {
    const result = await runLoad(concurrency, SECONDS_PER_LEVEL, once);
    throughputRows.push([
      stack.mode,
      String(concurrency),
      result.rate.toFixed(0),
      ms(percentile(result.sortedMs, 0.5)),
      ms(percentile(result.sortedMs, 0.99)),
      String(result.failures),
    ]);
  }
}

async function overheadPerNode(stack: BenchStack): Promise<void> {
  const org = randomUUID();
  const actor = stack.actor(org);
  for (const [shape, process_] of [
    ['chain', chainProcess(org, GRAPH_SIZE)],
    ['fan-out', fanOutProcess(org, GRAPH_SIZE)],
  ] as const) {
    stack.processes.set(process_.id, process_);
    const nodes = process_.nodes.length;
    await stack.testProcess(process_.id, {}, actor);
    const latencies: number[] = [];
    let engineMs = 0;
    for (let i = 0; i < GRAPH_RUNS; i++) {
      const t0 = performance.now();
      const reply = await stack.testProcess(process_.id, {}, actor);
      latencies.push(performance.now() - t0);
      engineMs += (reply.body as ExecutionRecord).duration_ms ?? 0;
    }
    const median = percentile(sorted(latencies), 0.5);
    overheadRows.push([
      stack.mode,
      `${shape} (${nodes} nodes)`,
      ms(median),
      ms(median / nodes),
      ms(engineMs / GRAPH_RUNS / nodes),
    ]);
  }
}

async function historyPages(stack: BenchStack): Promise<void> {
  const org = randomUUID();
  const process_ = fiveNodeProcess(org);
  stack.processes.set(process_.id, process_);
  const db = stack.store.db;
  const seedStart = performance.now();
  const chunk = 100_000;
  for (let from = 1; from <= HISTORY_ROWS; from += chunk) {
    const to = Math.min(HISTORY_ROWS, from + chunk - 1);
    await sql`
      INSERT INTO engine_executions (id, process_id, organization_id, status, started_at, completed_at, duration_ms,
        trigger_node_id, attempt, input_data, output_data, graph_snapshot)
      SELECT gen_random_uuid(), ${process_.id}, ${org}, CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'completed' END,
        now() - make_interval(secs => i), now() - make_interval(secs => i) + interval '1 second', 100 + i % 900,
        'in', 1, '{"amount": 1}', '{"Result": {"ok": true}}', '{"nodes": [], "edges": []}'
      FROM generate_series(${from}::int, ${to}::int) AS i`.execute(db);
  }
  await sql`
    INSERT INTO engine_execution_counts (process_id, status, count)
    SELECT process_id, status, count(*) FROM engine_executions WHERE process_id = ${process_.id} GROUP BY process_id, status`.execute(
    db,
  );
  await sql`ANALYZE engine_executions`.execute(db);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const actor = stack.actor(org);
  for (const [label, query] of [
    ['page 1 (20 newest)', {}],
    ['page 1, status=failed', { status: 'failed' }],
    ['page 1, last 24 h', { from: new Date(Date.now() - 86_400_000).toISOString() }],
    ['page 50 (offset 980)', { page: '50' }],
  ] as const) {
    const latencies: number[] = [];
    for (let i = 0; i < HISTORY_QUERIES; i++) {
      const t0 = performance.now();
      await stack.bus.request(
        engineHttp.listExecutions,
        { params: { processId: process_.id }, query, body: undefined, headers: {} },
        { actor },
      );
      latencies.push(performance.now() - t0);
    }
    const all = sorted(latencies);
    historyRows.push([
      stack.mode,
      HISTORY_ROWS.toLocaleString('en-US'),
      label,
      ms(percentile(all, 0.5)),
      ms(percentile(all, 0.99)),
    ]);
  }
  historyRows.push([
    stack.mode,
    HISTORY_ROWS.toLocaleString('en-US'),
    `(seeding took ${seedSeconds.toFixed(0)} s)`,
    '',
    '',
  ]);
}

async function parkedMemory(stack: BenchStack): Promise<void> {
  const org = randomUUID();
  const process_ = parkedProcess(org);
  stack.processes.set(process_.id, process_);
  const runtime = stack.engine.runtime;
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  for (let i = 0; i < PARKED; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, PARKED - i) }, () =>
        stack.enqueue({
          executionId: randomUUID(),
          processId: process_.id,
          organizationId: org,
          inputData: { i },
          source: 'trigger',
          requestedAt: new Date().toISOString(),
        }),
      ),
    );
  }
  // A wait over WEFT_WAIT_PARK_AFTER_SECONDS leaves memory: waiting = in memory + parked rows.
  const waiting = async (): Promise<number> =>
    runtime.engine.activeCount +
    Number(
      (await sql<{ n: string }>`SELECT count(*) AS n FROM engine_parked_waits`.execute(stack.store.db)).rows[0]?.n ?? 0,
    );
  while ((await waiting()) < PARKED && performance.now() - t0 < 600_000) await new Promise((r) => setTimeout(r, 200));
  const parkedIn = (performance.now() - t0) / 1000;
  // Let the last node events commit before measuring.
  await new Promise((r) => setTimeout(r, 2000));
  const after = process.memoryUsage().rss;
  memoryRows.push([
    stack.mode,
    (await waiting()).toLocaleString('en-US'),
    `${(before / 2 ** 20).toFixed(0)} MB`,
    `${(after / 2 ** 20).toFixed(0)} MB`,
    `${((after - before) / 1024 / PARKED).toFixed(1)} KB`,
    `${parkedIn.toFixed(1)} s`,
  ]);
}

async function main(): Promise<void> {
  console.log(`engine benchmark (${quick ? 'quick' : 'full'}), Node ${process.version}, modes: ${modes.join(', ')}`);
  for (const mode of modes) {
    const stack = await openBenchStack(mode);
    try {
      console.log(`[${mode}] (a) throughput`);
      await throughput(stack);
      console.log(`[${mode}] (b) overhead per node`);
      await overheadPerNode(stack);
      console.log(`[${mode}] (c) history pages`);
      await historyPages(stack);
      console.log(`[${mode}] (d) parked executions`);
      await parkedMemory(stack);
      console.log(`[${mode}] (e) execution stats`);
      statsRows.push(...(await executionStatsLatency(stack, HISTORY_ROWS)));
    } finally {
      await stack.close();
    }
  }
  printTable(
    '(a) 5-node process (input, conditional, two scripts, output) through POST /processes/test (bus request, no HTTP layer)',
    ['mode', 'concurrency', 'executions/s', 'p50', 'p99', 'failed'],
    throughputRows,
  );
  printTable(
    '(b) engine overhead per node (median of end-to-end latency / nodes; engine-recorded duration / nodes)',
    ['mode', 'graph', 'median latency', 'per node', 'engine per node'],
    overheadRows,
  );
  printTable(
    '(c) history page latency (GET /processes/executions/:processId, pageSize 20)',
    ['mode', 'stored executions', 'query', 'p50', 'p99'],
    historyRows,
  );
  printTable(
    '(d) memory with executions parked in wait nodes (RSS of the whole process)',
    ['mode', 'parked', 'RSS before', 'RSS after', 'per execution', 'time to park'],
    memoryRows,
  );
  printTable(
    '(e) execution-stats latency (GET /processes/execution-stats/:processId, 200 calls)',
    ['mode', 'executions of the process', 'call', 'p50', 'p95', 'p99', 'load average', 'seeding'],
    statsRows,
  );
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
