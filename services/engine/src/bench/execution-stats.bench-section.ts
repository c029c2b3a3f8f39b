import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { engineHttp } from '@weft/contracts';
import { sql } from 'kysely';
import { executionStats } from '../projections/execution-queries.js';
import { backfillExecutionStats } from '../projections/execution-stats-migration.js';
import { fiveNodeProcess } from './bench-processes.js';
import type { BenchStack } from './bench-stack.js';
import { ms, percentile } from './latency-stats.js';

/**
 * GET /processes/execution-stats/:processId (as the gateway sends it on the bus) for one process
 * with `rows` stored executions: completed, failed at 20 nodes with 5,000 distinct messages
 * (some longer than a statistics row holds), timed out and cancelled, durations from 5 ms to
 * over an hour. The statistics tables are filled by the backfill migration's SQL. Times `calls`
 * bus requests (the engine's handler with access check), then the read-model query alone; the
 * 1-minute load average beside them, since the machine may be shared.
 */
export async function executionStatsLatency(stack: BenchStack, rows: number, calls = 200): Promise<string[][]> {
  const org = randomUUID();
  const process_ = fiveNodeProcess(org);
  stack.processes.set(process_.id, process_);
  const processId = process_.id;
  const db = stack.store.db;
  const seedStart = performance.now();
  const chunk = 100_000;
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1);
    await sql`
      INSERT INTO engine_executions (id, process_id, organization_id, status, started_at, completed_at, duration_ms,
        error_message, trigger_node_id, attempt, failed_node_id, failed_node_name, graph_snapshot)
      SELECT gen_random_uuid(), ${processId}, ${org}, s.status, now() - make_interval(secs => i), now(),
        (5 * exp(ln(800000) * ((i::bigint * 7919) % 10007) / 10007.0))::bigint,
        CASE WHEN s.status = 'failed' THEN 'Node ' || i / 10 % 20 || ': '
            || CASE WHEN i / 10 % 97 = 0 THEN repeat('long ', 150) ELSE '' END || 'request ' || i / 10 % 5000 || ' failed'
          WHEN s.status = 'timeout' THEN 'execution exceeded its timeout of 3600 s' END,
        'in', 1, CASE WHEN s.status = 'failed' THEN 'node-' || i / 10 % 20 END,
        CASE WHEN s.status = 'failed' THEN 'Node ' || i / 10 % 20 END,
        '{"nodes": [], "edges": []}'
      FROM generate_series(${from}::int, ${to}::int) AS i,
        LATERAL (SELECT CASE WHEN i % 10 = 0 THEN 'failed' WHEN i % 50 = 1 THEN 'timeout' WHEN i % 50 = 3 THEN 'cancelled'
          ELSE 'completed' END AS status) s`.execute(db);
  }
  await sql`
    INSERT INTO engine_execution_counts (process_id, status, count)
    SELECT process_id, status, count(*) FROM engine_executions WHERE process_id = ${processId} GROUP BY process_id, status`.execute(
    db,
  );
  await backfillExecutionStats(db, processId);
  await sql`ANALYZE`.execute(db);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const actor = stack.actor(org);
  const viaBus = async (): Promise<void> => {
    const reply = await stack.bus.request(
      engineHttp.executionStats,
      { params: { processId }, query: {}, body: undefined, headers: {} },
      { actor },
    );
    if (reply.status !== 200) throw new Error(`execution-stats answered ${reply.status}`);
  };
  const row = async (label: string, once: () => Promise<unknown>): Promise<string[]> => {
    for (let i = 0; i < 20; i++) await once();
    const load = loadavg()[0]?.toFixed(1);
    const latencies: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await once();
      latencies.push(performance.now() - t0);
    }
    const all = latencies.sort((a, b) => a - b);
    return [
      stack.mode,
      rows.toLocaleString('en-US'),
      label,
      ms(percentile(all, 0.5)),
      ms(percentile(all, 0.95)),
      ms(percentile(all, 0.99)),
      `${load} -> ${loadavg()[0]?.toFixed(1)}`,
      `${seedSeconds.toFixed(0)} s`,
    ];
  };
  return [
    await row('bus request (as from the gateway)', viaBus),
    await row('the read-model query alone', () => executionStats(db, processId)),
  ];
}
