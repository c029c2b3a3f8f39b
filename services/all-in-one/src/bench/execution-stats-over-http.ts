import { seedStatsHistory, timeOneAtATime } from '@weft/engine/bench';
import { openDatabase } from '@weft/event-store';
import type { BenchCall } from './webhook-bench-process.js';
import { fiveNodeGraph } from './webhook-bench-process.js';

export interface StatsLatency {
  rows: number;
  seedSeconds: number;
  p50: string;
  p95: string;
  p99: string;
  load: string;
}

/**
 * `GET /api/v1/processes/execution-stats/:id` as a user calls it (gateway, API key, access check,
 * engine, read model), one call at a time, for a process of its own with `rows` stored
 * executions (the engine's stats-history-seed: completed, failed at 20 nodes with 5,000 distinct
 * messages, timed out, cancelled; durations 5 ms to over an hour) written straight into the
 * database: 20 calls to warm up, then `calls` timed.
 */
export async function executionStatsOverHttp(
  call: BenchCall,
  databaseUrl: string,
  organizationId: string,
  rows: number,
  calls = 200,
): Promise<StatsLatency> {
  const created = await call('POST', `/api/v1/processes/by-org/${organizationId}`, {
    name: 'stats history',
    ...fiveNodeGraph(true),
  });
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const processId = String(created.body?.id);
  const database = await openDatabase({ url: databaseUrl, poolSize: 1, timeouts: { statementMs: 0 } });
  const seedStart = performance.now();
  try {
    await seedStatsHistory(database.db, processId, organizationId, rows);
  } finally {
    await database.close();
  }
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const once = async (): Promise<void> => {
    const answer = await call('GET', `/api/v1/processes/execution-stats/${processId}`);
    const total = (answer.body as { total_runs?: unknown } | undefined)?.total_runs;
    if (answer.status !== 200 || Number(total) !== rows)
      throw new Error(`execution-stats answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  };
  const timed = await timeOneAtATime(once, calls);
  return {
    rows,
    seedSeconds,
    ...timed,
  };
}
