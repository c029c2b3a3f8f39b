import { sql } from 'kysely';
import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { EXECUTION_EVENT_TYPES, type ExecutionEvent } from '../domain/execution/events.js';
import {
  applyToRows,
  emptyRowSet,
  type ExecutionRow,
  type ExecutionRowSet,
  type NodeStateRow,
} from './execution-rows.js';

/**
 * Projection of execution events into the history tables: one row per execution, one per node
 * (every node of the snapshot starts `pending`), counts per process and status. The engine
 * applies a whole group commit at once (`applyExecutionEvents`, same transaction as the events):
 * it loads the rows the batch touches, folds the events over them and writes each changed row
 * once. `apply` (rebuild, other stores) is the same fold over one event. The large JSON columns
 * are never loaded: a row read from the table carries `undefined` there, written as NULL and
 * kept by COALESCE, so a node's completion does not move its input back and forth.
 */
const EXECUTION_TYPES = new Set<string>(EXECUTION_EVENT_TYPES);
const NODE_ROWS_PER_STATEMENT = 2000;

const jsonb = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));
const KEPT_WHEN_NULL = new Set(['input_data', 'output_data', 'graph_snapshot']);
const iso = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : value instanceof Date
      ? value.toISOString()
      : new Date(value as string).toISOString();
const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

const executionFromDb = (row: Record<string, unknown>): ExecutionRow => ({
  id: String(row.id),
  process_id: String(row.process_id),
  organization_id: String(row.organization_id),
  status: String(row.status),
  started_at: iso(row.started_at) as string,
  completed_at: iso(row.completed_at),
  duration_ms: num(row.duration_ms),
  error_message: (row.error_message as string | null) ?? null,
  triggered_by_user_id: (row.triggered_by_user_id as string | null) ?? null,
  trigger_node_id: String(row.trigger_node_id),
  attempt: Number(row.attempt),
  failed_node_id: (row.failed_node_id as string | null) ?? null,
  failed_node_name: (row.failed_node_name as string | null) ?? null,
  input_data: undefined,
  output_data: undefined,
  graph_snapshot: undefined,
});

const nodeFromDb = (row: Record<string, unknown>): NodeStateRow => ({
  execution_id: String(row.execution_id),
  node_id: String(row.node_id),
  position: Number(row.position),
  node_name: String(row.node_name),
  node_type: String(row.node_type),
  status: String(row.status),
  started_at: iso(row.started_at),
  completed_at: iso(row.completed_at),
  duration_ms: num(row.duration_ms),
  input_data: undefined,
  output_data: undefined,
  error: (row.error as string | null) ?? null,
  iterations: num(row.iterations),
});

const EXECUTION_COLUMNS = [
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
  'failed_node_id',
  'failed_node_name',
  'input_data',
  'output_data',
  'graph_snapshot',
] as const;
const NODE_COLUMNS = [
  'position',
  'node_name',
  'node_type',
  'status',
  'started_at',
  'completed_at',
  'duration_ms',
  'input_data',
  'output_data',
  'error',
  'iterations',
] as const;

async function loadRows(trx: Trx, events: readonly ExecutionEvent[]): Promise<ExecutionRowSet> {
  const rows = emptyRowSet();
  const startedHere = new Set(events.filter((e) => e.type === 'ExecutionStarted').map((e) => e.data.executionId));
  const toLoad = [...new Set(events.map((e) => e.data.executionId))].filter((id) => !startedHere.has(id));
  if (toLoad.length === 0) return rows;
  const executions = await trx
    .selectFrom('engine_executions')
    .select(['id', ...EXECUTION_COLUMNS.filter((column) => !KEPT_WHEN_NULL.has(column))])
    .where('id', 'in', toLoad)
    .execute();
  for (const row of executions) rows.executions.set(String(row.id), executionFromDb(row));
  const nodes = await trx
    .selectFrom('engine_node_states')
    .select(['execution_id', 'node_id', ...NODE_COLUMNS.filter((column) => !KEPT_WHEN_NULL.has(column))])
    .where('execution_id', 'in', toLoad)
    .execute();
  for (const row of nodes) {
    const node = nodeFromDb(row);
    let byNode = rows.nodes.get(node.execution_id);
    if (!byNode) rows.nodes.set(node.execution_id, (byNode = new Map()));
    byNode.set(node.node_id, node);
  }
  return rows;
}

const excluded = (table: string, columns: readonly string[]) =>
  Object.fromEntries(
    columns.map((c) => [
      c,
      KEPT_WHEN_NULL.has(c)
        ? sql`coalesce(${sql.ref(`excluded.${c}`)}, ${sql.ref(`${table}.${c}`)})`
        : sql.ref(`excluded.${c}`),
    ]),
  );

async function writeRows(trx: Trx, rows: ExecutionRowSet): Promise<void> {
  const executions = [...rows.changedExecutions].map((id) => rows.executions.get(id) as ExecutionRow);
  if (executions.length > 0) {
    await trx
      .insertInto('engine_executions')
      .values(
        executions.map((row) => ({
          ...row,
          input_data: jsonb(row.input_data),
          output_data: jsonb(row.output_data),
          graph_snapshot: jsonb(row.graph_snapshot),
        })),
      )
      .onConflict((oc) => oc.column('id').doUpdateSet(excluded('engine_executions', EXECUTION_COLUMNS)))
      .execute();
  }
  const nodes = [...rows.changedNodes].map((key) => {
    const [executionId, nodeId] = key.split('\u0000') as [string, string];
    return rows.nodes.get(executionId)?.get(nodeId) as NodeStateRow;
  });
  for (let from = 0; from < nodes.length; from += NODE_ROWS_PER_STATEMENT) {
    await trx
      .insertInto('engine_node_states')
      .values(
        nodes.slice(from, from + NODE_ROWS_PER_STATEMENT).map((row) => ({
          ...row,
          input_data: jsonb(row.input_data),
          output_data: jsonb(row.output_data),
        })),
      )
      .onConflict((oc) =>
        oc.columns(['execution_id', 'node_id']).doUpdateSet(excluded('engine_node_states', NODE_COLUMNS)),
      )
      .execute();
  }
  const counts = [...rows.countDeltas].filter(([, delta]) => delta !== 0);
  if (counts.length > 0) {
    await trx
      .insertInto('engine_execution_counts')
      .values(
        counts.map(([key, delta]) => {
          const [processId, status] = key.split('\u0000') as [string, string];
          return { process_id: processId, status, count: delta };
        }),
      )
      .onConflict((oc) =>
        oc
          .columns(['process_id', 'status'])
          .doUpdateSet({ count: sql`engine_execution_counts.count + excluded.count` }),
      )
      .execute();
  }
}

/** Applies every execution event of a commit (others are ignored) with a few statements. */
export async function applyExecutionEvents(trx: Trx, stored: readonly StoredEvent[]): Promise<void> {
  const events = stored
    .filter((event) => EXECUTION_TYPES.has(event.type))
    .map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent);
  if (events.length === 0) return;
  const rows = await loadRows(trx, events);
  for (const event of events) applyToRows(rows, event);
  await writeRows(trx, rows);
}

export const executionsProjection: Projection = {
  name: 'engine-executions',
  eventTypes: EXECUTION_EVENT_TYPES,
  apply: (trx, event) => applyExecutionEvents(trx, [event]),
  async reset(trx) {
    await sql`DELETE FROM engine_node_states`.execute(trx);
    await sql`DELETE FROM engine_executions`.execute(trx);
    await sql`DELETE FROM engine_execution_counts`.execute(trx);
  },
};
