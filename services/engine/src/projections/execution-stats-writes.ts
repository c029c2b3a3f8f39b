import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { durationBucket } from './duration-histogram.js';
import type { ExecutionRow } from './execution-rows.js';

/**
 * What executions that finished in a commit add to the statistics tables (see
 * execution-stats-migration.ts). An execution counts once, when it leaves `running`: a finished
 * row never changes status again, so the tables only grow, and the sums are the same whatever
 * the batching (live group commits or the rebuild's one event at a time). Aggregates whose
 * result depends on the database's collation or uuid order (the node name, the execution that
 * holds a long message) are taken by SQL, as the backfill takes them.
 */

/** Characters of an error message kept in its statistics row (and its index entry). */
export const STORED_MESSAGE_CHARS = 500;

/** The first STORED_MESSAGE_CHARS code points, as SQL's left() counts them; null when nothing was cut. */
function storedPrefix(message: string): string | null {
  if (message.length <= STORED_MESSAGE_CHARS) return null;
  let end = 0;
  for (let points = 0; points < STORED_MESSAGE_CHARS && end < message.length; points++) {
    end += (message.codePointAt(end) as number) > 0xffff ? 2 : 1;
  }
  return end < message.length ? message.slice(0, end) : null;
}

const durationWrite = (finished: readonly ExecutionRow[]): RawBuilder<unknown> | undefined => {
  const buckets = new Map<string, { process_id: string; bucket: number; count: number; total_ms: number }>();
  for (const row of finished) {
    if (row.duration_ms === null) continue;
    const bucket = durationBucket(row.duration_ms);
    const key = `${row.process_id}\u0000${bucket}`;
    const entry = buckets.get(key) ?? { process_id: row.process_id, bucket, count: 0, total_ms: 0 };
    entry.count += 1;
    entry.total_ms += row.duration_ms;
    buckets.set(key, entry);
  }
  if (buckets.size === 0) return undefined;
  return sql`INSERT INTO engine_execution_durations AS t (process_id, bucket, count, total_ms)
    SELECT process_id, bucket, count, total_ms FROM json_to_recordset(${JSON.stringify([...buckets.values()])}::json)
      AS r(process_id uuid, bucket integer, count bigint, total_ms bigint)
    ON CONFLICT (process_id, bucket) DO UPDATE SET count = t.count + excluded.count, total_ms = t.total_ms + excluded.total_ms`;
};

const failedNodeWrite = (finished: readonly ExecutionRow[]): RawBuilder<unknown> | undefined => {
  const failures = finished
    .filter((row) => row.status === 'failed' && row.failed_node_id !== null)
    .map((row) => ({ process_id: row.process_id, node_id: row.failed_node_id, node_name: row.failed_node_name }));
  if (failures.length === 0) return undefined;
  return sql`INSERT INTO engine_execution_failed_nodes AS t (process_id, node_id, node_name, count)
    SELECT process_id, node_id, max(node_name), count(*) FROM json_to_recordset(${JSON.stringify(failures)}::json)
      AS r(process_id uuid, node_id text, node_name text)
    GROUP BY process_id, node_id
    ON CONFLICT (process_id, node_id) DO UPDATE
      SET count = t.count + excluded.count, node_name = greatest(t.node_name, excluded.node_name)`;
};

const errorWrite = (finished: readonly ExecutionRow[]): RawBuilder<unknown> | undefined => {
  const errors = finished
    .filter((row) => (row.status === 'failed' || row.status === 'timeout') && row.error_message !== null)
    .map((row) => {
      const message = row.error_message as string;
      const prefix = storedPrefix(message);
      return {
        process_id: row.process_id,
        hash: createHash('sha256').update(message, 'utf8').digest('hex'),
        error_message: prefix ?? message,
        full_message_execution_id: prefix === null ? null : row.id,
      };
    });
  if (errors.length === 0) return undefined;
  return sql`INSERT INTO engine_execution_errors AS t (process_id, message_hash, error_message, full_message_execution_id, count)
    SELECT process_id, decode(hash, 'hex'), min(error_message), min(full_message_execution_id::text COLLATE "C")::uuid, count(*)
    FROM json_to_recordset(${JSON.stringify(errors)}::json)
      AS r(process_id uuid, hash text, error_message text, full_message_execution_id uuid)
    GROUP BY process_id, hash
    ON CONFLICT (process_id, message_hash) DO UPDATE SET count = t.count + excluded.count,
      full_message_execution_id = least(t.full_message_execution_id, excluded.full_message_execution_id)`;
};

/** One upsert per statistics table that the finished executions change. */
export function executionStatsWrites(finished: readonly ExecutionRow[]): RawBuilder<unknown>[] {
  return [durationWrite(finished), failedNodeWrite(finished), errorWrite(finished)].filter(
    (write): write is RawBuilder<unknown> => write !== undefined,
  );
}

/** Empties the statistics tables (the projection's reset, before a rebuild). */
export const resetExecutionStats = [
  sql`DELETE FROM engine_execution_durations`,
  sql`DELETE FROM engine_execution_failed_nodes`,
  sql`DELETE FROM engine_execution_errors`,
];
