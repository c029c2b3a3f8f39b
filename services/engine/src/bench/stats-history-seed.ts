import type { Db } from '@weft/event-store';
import { sql } from 'kysely';
import { backfillExecutionStats } from '../projections/execution-stats-migration.js';

/**
 * Gives one process `rows` finished executions for the execution-stats benchmarks, in seconds:
 * completed, failed at 20 nodes with 5,000 distinct messages (some longer than a statistics row
 * holds), timed out and cancelled, durations from 5 ms to over an hour. Only `engine_executions`
 * rows (no node states, no events) and the counts; the statistics tables are filled by the
 * backfill migration's SQL, as they would be for a history stored before the read model existed.
 */
export async function seedStatsHistory(db: Db, processId: string, organizationId: string, rows: number): Promise<void> {
  const chunk = 100_000;
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1);
    await sql`
      INSERT INTO engine_executions (id, process_id, organization_id, status, started_at, completed_at, duration_ms,
        error_message, trigger_node_id, attempt, failed_node_id, failed_node_name, graph_snapshot)
      SELECT gen_random_uuid(), ${processId}, ${organizationId}, s.status, now() - make_interval(secs => i), now(),
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
    SELECT process_id, status, count(*) FROM engine_executions WHERE process_id = ${processId} GROUP BY process_id, status
    ON CONFLICT (process_id, status) DO UPDATE SET count = engine_execution_counts.count + excluded.count`.execute(db);
  await backfillExecutionStats(db, processId);
  // Vacuumed and analyzed now, as a history that grew over time would be: otherwise autovacuum
  // works through the new rows during the measurement that follows (seconds of CPU on 2 cores).
  await sql`VACUUM (ANALYZE)`.execute(db);
  // And its pages written out: the checkpoint the seed's WAL would start comes now, not amid the timed calls.
  await sql`CHECKPOINT`.execute(db);
}
