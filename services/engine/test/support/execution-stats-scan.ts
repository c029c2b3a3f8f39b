import type { ExecutionStats, ExecutionStatus } from '@weft/contracts';
import type { Db } from '@weft/event-store';
import { sql } from 'kysely';

/**
 * The statistics as the engine computed them before they were projected: a scan of every
 * execution of the process (percentile_cont, GROUP BY). Kept only as the tests' oracle for the
 * projected tables; the service never runs it.
 */
export async function scannedExecutionStats(db: Db, processId: string): Promise<ExecutionStats> {
  const counts = await sql<{ status: string; n: string }>`
    SELECT status, count(*) AS n FROM engine_executions WHERE process_id = ${processId} GROUP BY status`.execute(db);
  const byStatus: Record<string, number> = {};
  for (const row of counts.rows) byStatus[row.status] = Number(row.n);
  const durations = await sql<{ avg_ms: string | null; p95_ms: string | null }>`
    SELECT avg(duration_ms) AS avg_ms, percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_ms
    FROM engine_executions WHERE process_id = ${processId} AND status <> 'running' AND duration_ms IS NOT NULL`.execute(
    db,
  );
  const byNode = await sql<{ node_id: string; node_name: string | null; n: string }>`
    SELECT failed_node_id AS node_id, max(failed_node_name) AS node_name, count(*) AS n FROM engine_executions
    WHERE process_id = ${processId} AND status = 'failed' AND failed_node_id IS NOT NULL
    GROUP BY failed_node_id ORDER BY n DESC, node_id LIMIT 50`.execute(db);
  const byError = await sql<{ error_message: string; n: string }>`
    SELECT error_message, count(*) AS n FROM engine_executions
    WHERE process_id = ${processId} AND status IN ('failed', 'timeout') AND error_message IS NOT NULL
    GROUP BY error_message ORDER BY n DESC, error_message LIMIT 50`.execute(db);
  const count = (status: ExecutionStatus): number => byStatus[status] ?? 0;
  const finished = count('completed') + count('failed') + count('timeout') + count('cancelled');
  const stats = durations.rows[0];
  const seconds = (ms: string | null | undefined): number =>
    ms === null || ms === undefined ? 0 : Math.round(Number(ms)) / 1000;
  return {
    process_id: processId,
    total_runs: finished + count('running'),
    running: count('running'),
    completed: count('completed'),
    failed: count('failed'),
    timeout: count('timeout'),
    cancelled: count('cancelled'),
    success_rate: finished === 0 ? 0 : count('completed') / finished,
    average_duration_seconds: seconds(stats?.avg_ms),
    p95_duration_seconds: seconds(stats?.p95_ms),
    failure_breakdown: {
      by_node: byNode.rows.map((r) => ({
        node_id: r.node_id,
        node_name: r.node_name ?? r.node_id,
        count: Number(r.n),
      })),
      by_error: byError.rows.map((r) => ({ error_message: r.error_message, count: Number(r.n) })),
    },
  };
}

/**
 * Asserts the projected answer is the scan's: every field equal, the p95 within the histogram's
 * documented precision (1/128 of the duration, plus the millisecond both are rounded to).
 */
export function expectSameStats(projected: ExecutionStats, scanned: ExecutionStats): void {
  expect({ ...projected, p95_duration_seconds: 0 }).toEqual({ ...scanned, p95_duration_seconds: 0 });
  expect(Math.abs(projected.p95_duration_seconds - scanned.p95_duration_seconds)).toBeLessThanOrEqual(
    scanned.p95_duration_seconds / 128 + 0.001,
  );
}
