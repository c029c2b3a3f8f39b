import { sql } from 'kysely';
import type { Db, Migration } from '@weft/event-store';
import { durationBucketSql } from './duration-histogram.js';
import { STORED_MESSAGE_CHARS } from './execution-stats-writes.js';

/**
 * Execution statistics as read models (DESIGN: "stats" is one of the projections), so
 * GET /processes/execution-stats reads a few rows however many executions a process has:
 * durations per process and histogram bucket (count and sum: the average and the p95), failures
 * per process and failed node, and per process and error message. The executions projection
 * keeps them in the same transaction as the execution rows; this migration creates them and
 * fills them from the rows already there.
 */
export const executionStatsMigration: Migration = {
  name: '0009-execution-stats',
  async up(db) {
    await sql`
      CREATE TABLE engine_execution_durations (
        process_id uuid NOT NULL,
        bucket integer NOT NULL,
        count bigint NOT NULL,
        total_ms bigint NOT NULL,
        PRIMARY KEY (process_id, bucket)
      )`.execute(db);
    await sql`
      CREATE TABLE engine_execution_failed_nodes (
        process_id uuid NOT NULL,
        node_id text NOT NULL,
        node_name text,
        count bigint NOT NULL,
        PRIMARY KEY (process_id, node_id)
      )`.execute(db);
    // Keyed by the message's SHA-256: messages are unbounded and may all differ. The row holds the
    // first STORED_MESSAGE_CHARS characters; a longer message is read whole from one execution.
    await sql`
      CREATE TABLE engine_execution_errors (
        process_id uuid NOT NULL,
        message_hash bytea NOT NULL,
        error_message text NOT NULL,
        full_message_execution_id uuid,
        count bigint NOT NULL,
        PRIMARY KEY (process_id, message_hash)
      )`.execute(db);
    // The 50 most frequent straight from the index, however many distinct messages there are.
    await sql`
      CREATE INDEX engine_execution_errors_top
      ON engine_execution_errors (process_id, count DESC, error_message, message_hash)`.execute(db);
    // Engines of this version that finish executions meanwhile wait, so none is counted twice or missed.
    await sql`LOCK TABLE engine_executions IN SHARE MODE`.execute(db);
    await backfillExecutionStats(db);
  },
};

/**
 * Fills the statistics tables from engine_executions (of one process, or all), exactly as the
 * projection would have: the migration runs it over existing rows, the benchmark over its seeded ones.
 */
export async function backfillExecutionStats(db: Db, processId?: string): Promise<void> {
  const ofProcess = processId === undefined ? sql`` : sql`AND process_id = ${processId}`;
  await sql`
    INSERT INTO engine_execution_durations (process_id, bucket, count, total_ms)
    SELECT process_id, ${durationBucketSql(sql`duration_ms`)}, count(*), sum(duration_ms) FROM engine_executions
    WHERE status <> 'running' AND duration_ms IS NOT NULL ${ofProcess}
    GROUP BY 1, 2`.execute(db);
  await sql`
    INSERT INTO engine_execution_failed_nodes (process_id, node_id, node_name, count)
    SELECT process_id, failed_node_id, max(failed_node_name), count(*) FROM engine_executions
    WHERE status = 'failed' AND failed_node_id IS NOT NULL ${ofProcess}
    GROUP BY process_id, failed_node_id`.execute(db);
  await sql`
    INSERT INTO engine_execution_errors (process_id, message_hash, error_message, full_message_execution_id, count)
    SELECT process_id, sha256(convert_to(error_message, 'UTF8')), left(error_message, ${sql.lit(STORED_MESSAGE_CHARS)}),
      CASE WHEN char_length(error_message) > ${sql.lit(STORED_MESSAGE_CHARS)} THEN min(id::text COLLATE "C")::uuid END, count(*)
    FROM engine_executions
    WHERE status IN ('failed', 'timeout') AND error_message IS NOT NULL ${ofProcess}
    GROUP BY process_id, error_message`.execute(db);
}
