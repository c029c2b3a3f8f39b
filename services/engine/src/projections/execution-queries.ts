import { sql } from 'kysely';
import type { Db } from '@weft/event-store';
import type {
  ExecutionPage,
  ExecutionRecord,
  ExecutionStats,
  ExecutionStatus,
  ExecutionSummary,
  GraphSnapshot,
  NodeState,
  TokenUsage,
} from '@weft/contracts';
import { processStreamId } from '../domain/graph/process-stream.js';
import { deliveriesOfExecution, toDeliveries } from './error-webhook-deliveries.js';
import { histogramPercentile } from './duration-histogram.js';
import { EXECUTION_STATS_FUNCTION } from './execution-stats-function-migration.js';
import { inJsonbKeyOrder, inJsonbKeyOrderKept } from './jsonb-key-order.js';
import type { FinishedRows } from './recently-finished-rows.js';
import { resolveRowValues, type ValueReader } from './resolve-row-values.js';
import { isoTimestamp } from './iso-timestamp.js';

/** Reads of the execution read models; nothing here reads events. */
type Row = Record<string, unknown>;

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
/** jsonb columns arrive decoded from both drivers; a string here is a JSON string value, never JSON text. */
const parsed = (value: unknown): unknown => value ?? null;

const SUMMARY_COLUMNS = [
  'id',
  'process_id',
  'organization_id',
  'status',
  'started_at',
  'completed_at',
  'duration_ms',
  'error_message',
  'triggered_by_user_id',
  'trigger_node_id',
  'attempt',
  'queued',
] as const;

const toSummary = (row: Row): ExecutionSummary => {
  const durationMs = num(row.duration_ms);
  return {
    id: String(row.id),
    execution_id: String(row.id),
    process_id: String(row.process_id),
    organization_id: String(row.organization_id),
    status: row.status as ExecutionStatus,
    started_at: isoTimestamp(row.started_at) as string,
    completed_at: isoTimestamp(row.completed_at),
    duration_seconds: durationMs === null ? null : Math.round(durationMs / 1000),
    duration_ms: durationMs,
    error_message: (row.error_message as string | null) ?? null,
    triggered_by_user_id: (row.triggered_by_user_id as string | null) ?? null,
    trigger_node_id: String(row.trigger_node_id),
    attempt: Number(row.attempt),
    ...(row.queued === true ? { queued: true as const } : {}),
  };
};

const toNodeState = (row: Row): NodeState => ({
  node_id: String(row.node_id),
  node_name: String(row.node_name),
  node_type: String(row.node_type),
  status: row.status as NodeState['status'],
  started_at: isoTimestamp(row.started_at),
  completed_at: isoTimestamp(row.completed_at),
  duration_ms: num(row.duration_ms),
  input_data: parsed(row.input_data),
  output_data: parsed(row.output_data),
  error: (row.error as string | null) ?? null,
  ...(row.iterations === null || row.iterations === undefined ? {} : { iterations: Number(row.iterations) }),
  ...(row.token_usage === null || row.token_usage === undefined
    ? {}
    : { token_usage: parsed(row.token_usage) as TokenUsage }),
});

/** A node row nested in `findExecution`'s answer: already JSON, so its JSON columns are values, not text. */
const toNestedNodeState = (row: Row): NodeState => ({
  ...toNodeState({ ...row, input_data: null, output_data: null }),
  input_data: row.input_data ?? null,
  output_data: row.output_data ?? null,
});

/** One round trip: the execution row with its node rows aggregated (a synchronous run reads it at the end). */
export async function findExecution(
  db: Db,
  executionId: string,
  readValue?: ValueReader,
): Promise<ExecutionRecord | undefined> {
  return (await findExecutions(db, [executionId], readValue)).get(executionId);
}

/** Several records in one round trip (synchronous runs that finished together), by id; unknown ids are absent. */
export async function findExecutions(
  db: Db,
  executionIds: readonly string[],
  readValue?: ValueReader,
): Promise<Map<string, ExecutionRecord>> {
  const records = new Map<string, ExecutionRecord>();
  if (executionIds.length === 0) return records;
  // The graph is stored once under its id (graph-snapshots-migration.ts); a row from before that,
  // or started by an engine of the previous version, holds its own; a queued one has none yet.
  const { rows } = await sql<Row>`
    SELECT e.*, coalesce((SELECT s.snapshot FROM engine_graph_snapshots s WHERE s.id = e.graph_snapshot_id),
      e.graph_snapshot, '{"nodes": [], "edges": []}'::jsonb) AS graph, (
      SELECT coalesce(jsonb_agg(to_jsonb(n) ORDER BY n.position), '[]'::jsonb)
      FROM engine_node_states n WHERE n.execution_id = e.id
    ) AS node_rows, ${deliveriesOfExecution(sql`e.id`)} AS delivery_rows
    FROM engine_executions e WHERE e.id IN (${sql.join(executionIds)})`.execute(db);
  for (const row of rows) {
    row.graph_snapshot = row.graph;
    const nodes = (parsed(row.node_rows) ?? []) as Row[];
    records.set(String(row.id), await recordOf(row, nodes, row.delivery_rows, readValue));
  }
  return records;
}

/** The record of an execution row with its node rows (in position order) and error-webhook deliveries. */
async function recordOf(
  row: Row,
  nodes: Row[],
  deliveries: unknown,
  readValue?: ValueReader,
): Promise<ExecutionRecord> {
  await resolveRowValues(row, nodes, readValue);
  return {
    ...toSummary(row),
    input_data: parsed(row.input_data),
    output_data: parsed(row.output_data),
    node_states: nodes.map(toNestedNodeState),
    graph_snapshot: parsed(row.graph_snapshot) as GraphSnapshot,
    error_webhook_deliveries: toDeliveries(deliveries),
  };
}

/**
 * The record of an execution written whole by one commit, from the rows that commit wrote
 * (`RecentlyFinishedRows`): what `findExecution` would read back, without the read.
 */
export function recordOfFinishedRows(rows: FinishedRows, readValue?: ValueReader): Promise<ExecutionRecord> {
  const { execution } = rows;
  const nodes = [...rows.nodes]
    .sort((a, b) => a.position - b.position)
    .map((node): Row => ({
      ...node,
      input_data: inJsonbKeyOrder(node.input_data),
      output_data: inJsonbKeyOrder(node.output_data),
      input_from: inJsonbKeyOrder(node.input_from),
      token_usage: inJsonbKeyOrder(node.token_usage),
    }));
  const row: Row = {
    ...execution,
    input_data: inJsonbKeyOrder(execution.input_data),
    output_data: inJsonbKeyOrder(execution.output_data),
    graph_snapshot: inJsonbKeyOrderKept(execution.graph_snapshot),
  };
  return recordOf(row, nodes, [], readValue);
}

export interface HistoryFilter {
  page: number;
  pageSize: number;
  status?: ExecutionStatus;
  from?: Date;
  to?: Date;
}

/** Newest first; keyset-friendly index (process_id, [status,] started_at desc, id desc). */
export async function listExecutions(db: Db, processId: string, filter: HistoryFilter): Promise<ExecutionPage> {
  let query = db.selectFrom('engine_executions').where('process_id', '=', processId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.from) query = query.where('started_at', '>=', filter.from);
  if (filter.to) query = query.where('started_at', '<', filter.to);
  const rows = await query
    .select([...SUMMARY_COLUMNS])
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.pageSize)
    .offset((filter.page - 1) * filter.pageSize)
    .execute();
  let total: number;
  if (filter.from || filter.to) {
    const counted = await query.select(sql<string>`count(*)`.as('n')).executeTakeFirst();
    total = Number(counted?.n ?? 0);
  } else {
    let counts = db.selectFrom('engine_execution_counts').where('process_id', '=', processId);
    if (filter.status) counts = counts.where('status', '=', filter.status);
    const counted = await counts.select(sql<string>`coalesce(sum(count), 0)`.as('n')).executeTakeFirst();
    total = Number(counted?.n ?? 0);
  }
  return { items: rows.map(toSummary), page: filter.page, pageSize: filter.pageSize, total };
}

const STATS_COLUMNS = ['o_counts', 'o_histogram', 'o_total_ms', 'o_by_node', 'o_by_error'] as const;

interface StatsRow {
  o_counts: Record<string, number> | null;
  /** Executions per duration bucket, in no particular order (null arrays without durations). */
  o_histogram: { buckets: number[] | null; counts: number[] | null } | null;
  o_total_ms: number | null;
  o_by_node: { node_id: string; node_name: string | null; count: number }[] | null;
  o_by_error: { error_message: string; count: number }[] | null;
}

/**
 * From the statistics read models (execution-stats-writes.ts) in one statement, so one snapshot
 * and one round trip, reading a few hundred rows whatever the number of executions; the
 * statement is the function `engine_execution_stats_v1` (execution-stats-function-migration.ts), so
 * it is planned once per connection. The p95 is computed from the duration histogram (exact
 * below 128 ms, else within 0.8 %). A message longer than its statistics row holds is read whole
 * from an execution that has it.
 */
export async function executionStats(db: Db, processId: string): Promise<ExecutionStats> {
  const { rows } = await sql<StatsRow>`SELECT * FROM ${sql.raw(EXECUTION_STATS_FUNCTION)}(${processId})`.execute(db);
  return statsOf(processId, rows[0]);
}

/**
 * `executionStats`, in the statement that reads the process's current revision (the version of
 * its catalog stream, as `processRevisions` does): for a caller that knows the process at
 * `revision` and would otherwise read the revision first, one round trip instead of two.
 * Undefined when the revision is another (an edit, a delete): the statistics are then not read
 * at all, the function's scan is gated on the revision.
 */
export async function executionStatsAtRevision(
  db: Db,
  processId: string,
  revision: number,
): Promise<ExecutionStats | undefined> {
  const { rows } = await statsAtRevisionStatement(processId, revision).execute(db);
  const row = rows[0];
  return row && Number(row.revision) === revision ? statsOf(processId, row) : undefined;
}

/**
 * The statement of `executionStatsAtRevision`. The WHERE of the lateral subquery gates the
 * function (a one-time filter above its scan); without OFFSET 0 the subquery is pulled up and
 * the WHERE becomes a filter applied to the function's rows, after it ran.
 */
export const statsAtRevisionStatement = (processId: string, revision: number) =>
  sql<StatsRow & { revision: string | number }>`
    SELECT r.revision, s.* FROM (
      SELECT coalesce(max(stream_version), 0) AS revision FROM events WHERE stream_id = ${processStreamId(processId)}
    ) r LEFT JOIN LATERAL (
      SELECT * FROM ${sql.raw(EXECUTION_STATS_FUNCTION)}(${processId}) WHERE r.revision = ${revision} OFFSET 0
    ) s ON true`;

function statsOf(processId: string, row: StatsRow | undefined): ExecutionStats {
  // A function of another shape (another version's) must fail the call, not answer zeros.
  if (!row || !STATS_COLUMNS.every((column) => column in row))
    throw new Error(`${EXECUTION_STATS_FUNCTION} answered a row without the columns ${STATS_COLUMNS.join(', ')}`);
  const count = (status: ExecutionStatus): number => Number(row.o_counts?.[status] ?? 0);
  const finished = count('completed') + count('failed') + count('timeout') + count('cancelled');
  // Sorted here: ordering the aggregate in SQL took longer than the rest of the statement.
  const buckets = row.o_histogram?.buckets ?? [];
  const counts = row.o_histogram?.counts ?? [];
  const order = buckets.map((_, i) => i).sort((a, b) => (buckets[a] as number) - (buckets[b] as number));
  const measured = counts.reduce((sum, n) => sum + n, 0);
  const p95 = histogramPercentile(
    order.map((i) => buckets[i] as number),
    order.map((i) => counts[i] as number),
    0.95,
  );
  const seconds = (ms: number | null): number => (ms === null ? 0 : Math.round(ms) / 1000);
  return {
    process_id: processId,
    total_runs: finished + count('running'),
    running: count('running'),
    completed: count('completed'),
    failed: count('failed'),
    timeout: count('timeout'),
    cancelled: count('cancelled'),
    success_rate: finished === 0 ? 0 : count('completed') / finished,
    average_duration_seconds: seconds(measured === 0 ? null : Number(row.o_total_ms) / measured),
    p95_duration_seconds: seconds(p95),
    failure_breakdown: {
      by_node: (row.o_by_node ?? []).map((r) => ({
        node_id: r.node_id,
        node_name: r.node_name ?? r.node_id,
        count: r.count,
      })),
      by_error: (row.o_by_error ?? []).map((r) => ({ error_message: r.error_message, count: r.count })),
    },
  };
}

/** Those of `executionIds` that are no longer running (cancelled or finished by another engine). */
export async function finishedAmong(db: Db, executionIds: readonly string[]): Promise<string[]> {
  if (executionIds.length === 0) return [];
  const rows = await db
    .selectFrom('engine_executions')
    .select('id')
    .where('id', 'in', [...executionIds])
    .where('status', '<>', 'running')
    .execute();
  return rows.map((row) => String(row.id));
}

/** Executions still marked running: candidates for resume after an engine died. */
export async function runningExecutionIds(db: Db, limit = 1000): Promise<string[]> {
  const rows = await db
    .selectFrom('engine_executions')
    .select('id')
    .where('status', '=', 'running')
    .orderBy('started_at')
    .limit(limit)
    .execute();
  return rows.map((row) => String(row.id));
}
