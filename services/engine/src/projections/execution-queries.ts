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
} from '@weft/contracts';
import { deliveriesOfExecution, toDeliveries } from './error-webhook-deliveries.js';
import { resolveRowValues, type ValueReader } from './resolve-row-values.js';

/** Reads of the execution read models; nothing here reads events. */
type Row = Record<string, unknown>;

const iso = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : value instanceof Date
      ? value.toISOString()
      : new Date(value as string).toISOString();
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
    started_at: iso(row.started_at) as string,
    completed_at: iso(row.completed_at),
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
  started_at: iso(row.started_at),
  completed_at: iso(row.completed_at),
  duration_ms: num(row.duration_ms),
  input_data: parsed(row.input_data),
  output_data: parsed(row.output_data),
  error: (row.error as string | null) ?? null,
  ...(row.iterations === null || row.iterations === undefined ? {} : { iterations: Number(row.iterations) }),
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
  const { rows } = await sql<Row>`
    SELECT e.*, (
      SELECT coalesce(jsonb_agg(to_jsonb(n) ORDER BY n.position), '[]'::jsonb)
      FROM engine_node_states n WHERE n.execution_id = e.id
    ) AS node_rows, ${deliveriesOfExecution(sql`e.id`)} AS delivery_rows
    FROM engine_executions e WHERE e.id = ${executionId}`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  const nodes = (parsed(row.node_rows) ?? []) as Row[];
  await resolveRowValues(row, nodes, readValue);
  return {
    ...toSummary(row),
    input_data: parsed(row.input_data),
    output_data: parsed(row.output_data),
    node_states: nodes.map(toNestedNodeState),
    graph_snapshot: parsed(row.graph_snapshot) as GraphSnapshot,
    error_webhook_deliveries: toDeliveries(row.delivery_rows),
  };
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

export async function executionStats(db: Db, processId: string): Promise<ExecutionStats> {
  const counts = await db
    .selectFrom('engine_execution_counts')
    .select(['status', 'count'])
    .where('process_id', '=', processId)
    .execute();
  const byStatus: Record<string, number> = {};
  for (const row of counts) byStatus[String(row.status)] = Number(row.count);
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
