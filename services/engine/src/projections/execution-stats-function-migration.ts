import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** The function's name; a read of another shape gets a new name, never a replaced body. */
export const EXECUTION_STATS_FUNCTION = 'engine_execution_stats_v1';

/**
 * The execution-stats read (execution-queries.ts `executionStats`) as a PL/pgSQL function, so
 * each connection plans its statement once and keeps the plan: planned per call, its five
 * subqueries took about as long to plan (0.4-0.7 ms) as to run with 1,000,000 executions.
 * `plan_cache_mode = force_generic_plan`: PostgreSQL would otherwise keep planning per call
 * whenever one large process makes the generic plan's estimate look worse than a custom one's
 * (the plan is an index lookup by process either way). One statement, so one snapshot. The OUT
 * columns are prefixed so they cannot be mistaken for the tables' columns inside the body. The
 * histogram comes as two arrays (buckets, their counts; null without durations), which
 * JSON.parse turns into two packed arrays of numbers instead of an object with a key per bucket.
 *
 * The name carries a version and the body is never replaced: engines of the previous version
 * still run during an upgrade (and after a downgrade) and must find the shape they read. A read
 * of another shape is a new function under a new name, created by a new migration; the old one is
 * dropped a release later.
 */
export const executionStatsFunctionMigration: Migration = {
  name: '0011-execution-stats-function',
  async up(db) {
    await sql`
      CREATE OR REPLACE FUNCTION engine_execution_stats_v1(p_process_id uuid)
      RETURNS TABLE (o_counts json, o_histogram json, o_total_ms float8, o_by_node json, o_by_error json)
      LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $body$
      BEGIN
        RETURN QUERY SELECT
          (SELECT json_object_agg(c.status, c.count) FROM engine_execution_counts c WHERE c.process_id = p_process_id),
          d.histogram, d.total_ms,
          (SELECT json_agg(n ORDER BY n.count DESC, n.node_id) FROM (
            SELECT f.node_id, f.node_name, f.count FROM engine_execution_failed_nodes f
            WHERE f.process_id = p_process_id ORDER BY f.count DESC, f.node_id LIMIT 50
          ) n),
          (SELECT json_agg(json_build_object('error_message', coalesce(x.error_message, e.error_message), 'count', e.count)
              ORDER BY e.count DESC, e.error_message, e.message_hash) FROM (
            SELECT r.error_message, r.message_hash, r.full_message_execution_id, r.count FROM engine_execution_errors r
            WHERE r.process_id = p_process_id ORDER BY r.count DESC, r.error_message, r.message_hash LIMIT 50
          ) e LEFT JOIN engine_executions x ON x.id = e.full_message_execution_id)
        FROM (
          SELECT json_build_object('buckets', array_agg(h.bucket), 'counts', array_agg(h.count)) AS histogram, sum(h.total_ms)::float8 AS total_ms
          FROM engine_execution_durations h WHERE h.process_id = p_process_id
        ) d;
      END
      $body$`.execute(db);
  },
};
