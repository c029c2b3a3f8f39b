import { sql, type RawBuilder } from 'kysely';
import { jsonRecordsetFor, type Db, type Projection, type StoredEvent, type Trx } from '@weft/event-store';
import { GRAPH_SNAPSHOT_RECORDED, type StoredValueRef, type TokenUsage } from '@weft/contracts';
import { EXECUTION_EVENT_TYPES, type ExecutionEvent } from '../domain/execution/events.js';
import { errorWebhookDeliveryWrites, resetErrorWebhookDeliveries } from './error-webhook-deliveries.js';
import { ExecutionRowCache } from './execution-row-cache.js';
import { jsonbKeyOrder } from './jsonb-key-order.js';
import { withStartGraphs } from './start-graphs.js';
import type { RecentlyFinishedRows } from './recently-finished-rows.js';
import { executionStatsWrites, resetExecutionStats } from './execution-stats-writes.js';
import {
  applyToRows,
  emptyRowSet,
  type ExecutionRow,
  type ExecutionRowSet,
  type NodeStateRow,
} from './execution-rows.js';
import { isoTimestamp } from './iso-timestamp.js';

/**
 * Projection of execution events into the history tables: one row per execution, one per node
 * (every node of the snapshot starts `pending`), counts per process and status, statistics of the
 * finished ones (execution-stats-writes.ts). The engine
 * applies a whole group commit at once (`applyExecutionEvents`, same transaction as the events):
 * it loads the rows the batch touches, folds the events over them and writes each changed row
 * once, all tables in one statement. `apply` (rebuild, other stores) is the same fold over one
 * event. The large JSON columns are never loaded: a row read from the table carries `undefined`
 * there, written as NULL and kept by COALESCE, so a node's completion does not move its input
 * back and forth. With a row cache (the engine's own commits) the rows of executions this engine
 * wrote last are not read back at all. A row names its graph by id (graph-snapshot-ids.ts): each
 * distinct graph is stored once (from its GraphSnapshotRecorded event, or from an ExecutionStarted
 * stored before schema version 3, which carries it), skipped when the cache knows it committed
 * already. A start that names its graph gets it back before the fold (start-graphs.ts).
 */
const EXECUTION_TYPES = new Set<string>(EXECUTION_EVENT_TYPES);
const FIRST_EVENTS = new Set<string>(['ExecutionAccepted', 'ExecutionStarted']);

const KEPT_WHEN_NULL = new Set(['input_data', 'output_data', 'input_from']);
const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

const executionFromDb = (row: Record<string, unknown>): ExecutionRow => ({
  id: String(row.id),
  process_id: String(row.process_id),
  organization_id: String(row.organization_id),
  status: String(row.status),
  started_at: isoTimestamp(row.started_at) as string,
  completed_at: isoTimestamp(row.completed_at),
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
  graph_snapshot_id: (row.graph_snapshot_id as string | null) ?? null,
  input_ref: (row.input_ref as StoredValueRef | null) ?? null,
  output_ref: (row.output_ref as StoredValueRef | null) ?? null,
  queued: row.queued === true,
});

const nodeFromDb = (row: Record<string, unknown>): NodeStateRow => ({
  execution_id: String(row.execution_id),
  node_id: String(row.node_id),
  position: Number(row.position),
  node_name: String(row.node_name),
  node_type: String(row.node_type),
  status: String(row.status),
  started_at: isoTimestamp(row.started_at),
  completed_at: isoTimestamp(row.completed_at),
  duration_ms: num(row.duration_ms),
  input_data: undefined,
  output_data: undefined,
  error: (row.error as string | null) ?? null,
  iterations: num(row.iterations),
  input_from: undefined,
  output_ref: (row.output_ref as StoredValueRef | null) ?? null,
  token_usage: (row.token_usage as TokenUsage | null) ?? null,
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
  'graph_snapshot_id',
  'input_ref',
  'output_ref',
  'queued',
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
  'input_from',
  'output_ref',
  'token_usage',
] as const;

/** First and last stream version of each execution's events in this batch. */
interface BatchEvent {
  event: ExecutionEvent;
  streamVersion: number;
}

/**
 * The rows the batch's events apply to: new rows for streams they start, cached rows, and the
 * rest read with `reader`. Undefined when rows must be read and there is no `reader` (the caller
 * then folds again inside a transaction, so the reads see what holds under the append lock).
 */
async function loadRows(
  reader: Db | undefined,
  events: readonly BatchEvent[],
  cache: ExecutionRowCache | undefined,
): Promise<ExecutionRowSet | undefined> {
  const rows = emptyRowSet();
  // A stream's first event creates its row: nothing to load (a start after an acceptance loads the accepted row).
  const startedHere = new Set(
    events
      .filter(({ event, streamVersion }) => streamVersion === 1 && FIRST_EVENTS.has(event.type))
      .map(({ event }) => event.data.executionId),
  );
  const firstVersion = new Map<string, number>();
  for (const { event, streamVersion } of events) {
    if (!firstVersion.has(event.data.executionId)) firstVersion.set(event.data.executionId, streamVersion);
  }
  const loaded = [...firstVersion].filter(([id]) => !startedHere.has(id));
  if (!reader && loaded.some(([id, version]) => !cache?.has(id, version - 1))) return undefined;
  const toLoad: string[] = [];
  for (const [id, version] of loaded) {
    const cached = cache?.take(id, version - 1);
    if (!cached) {
      toLoad.push(id);
      continue;
    }
    rows.executions.set(id, cached.execution);
    rows.nodes.set(id, cached.nodes);
  }
  if (toLoad.length === 0 || !reader) return rows;
  const executions = await reader
    .selectFrom('engine_executions')
    .select(['id', ...EXECUTION_COLUMNS.filter((column) => !KEPT_WHEN_NULL.has(column))])
    .where('id', 'in', toLoad)
    .execute();
  for (const row of executions) rows.executions.set(String(row.id), executionFromDb(row));
  const nodes = await reader
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

/** Column types of the recordset each upsert reads its rows from; `json` is the large columns' type (jsonb or json). */
const executionTypesSql = (json: string): string => `id uuid, process_id uuid, organization_id uuid, status text,
  started_at timestamptz, completed_at timestamptz, duration_ms bigint, error_message text, triggered_by_user_id text,
  trigger_node_id text, attempt integer, failed_node_id text, failed_node_name text, input_data ${json},
  output_data ${json}, graph_snapshot_id text, input_ref jsonb, output_ref jsonb, queued boolean`;
const nodeTypesSql = (json: string): string => `execution_id uuid, node_id text, position integer, node_name text,
  node_type text, status text, started_at timestamptz, completed_at timestamptz, duration_ms bigint,
  input_data ${json}, output_data ${json}, error text, iterations integer, input_from ${json}, output_ref jsonb,
  token_usage jsonb`;

/**
 * The recordset parses the rows once, as jsonb, unless they are too large for one jsonb value
 * (`jsonRecordsetFor`); the tables hold jsonb. A large JSON column the row carries as JSON null
 * comes with a flag and is stored as jsonb null, so it replaces an earlier value; SQL NULL stays
 * "not carried" (kept by COALESCE below).
 */
const nullFlag = (column: string): string => `${column}_is_null`;
const selected = (column: string): string =>
  KEPT_WHEN_NULL.has(column)
    ? `CASE WHEN r.${nullFlag(column)} THEN 'null'::jsonb ELSE r.${column}::jsonb END`
    : column;

/**
 * The row as sent: only the table's columns (a row in memory also carries its graph, which is
 * stored on its own), a flag beside each large JSON column that is JSON null, and the keys in the
 * order jsonb keeps them: PostgreSQL then finds each object already sorted when it parses the
 * parameter (sorting took about a fifth of parsing a batch's rows).
 */
const sentRow = (keys: readonly string[], columns: readonly string[], kept: readonly string[]) => {
  const fields = [...keys, ...columns, ...kept.map(nullFlag)]
    .sort(jsonbKeyOrder)
    .map((field) => ({ field, flags: kept.find((column) => nullFlag(column) === field) }));
  return (row: object): object => {
    const source = row as Record<string, unknown>;
    const sent: Record<string, unknown> = {};
    for (const { field, flags } of fields) {
      if (flags === undefined) sent[field] = source[field];
      else if (source[flags] === null) sent[field] = true;
    }
    return sent;
  };
};

/** `SET` list of an upsert: the large JSON columns keep their value when the row carries none. */
const updateSet = (table: string, columns: readonly string[]): string =>
  columns
    .map((c) => (KEPT_WHEN_NULL.has(c) ? `${c} = coalesce(excluded.${c}, ${table}.${c})` : `${c} = excluded.${c}`))
    .join(', ');

/**
 * One multi-row upsert per table. The rows travel as one JSON array parameter (JSON columns
 * nested, so each value is stringified once; undefined arrives as SQL NULL, JSON null of a large
 * JSON column as its flag), not as one parameter per cell.
 */
const upsertStatement = (table: string, key: string, columns: readonly string[], types: (json: string) => string) => {
  const kept = columns.filter((column) => KEPT_WHEN_NULL.has(column));
  const flagTypes = kept.map((column) => `, ${nullFlag(column)} boolean`).join('');
  const sent = sentRow(key.split(', '), columns, kept);
  return (rows: readonly object[]): RawBuilder<unknown> => {
    const rowsJson = JSON.stringify(rows.map(sent));
    const { fn, type } = jsonRecordsetFor(rowsJson);
    return sql`INSERT INTO ${sql.raw(`${table} (${key}, ${columns.join(', ')})`)}
      SELECT ${sql.raw(`${key}, ${columns.map(selected).join(', ')}`)} FROM ${sql.raw(fn)}(${rowsJson}::${sql.raw(type)})
        AS r(${sql.raw(types(type) + flagTypes)})
      ON CONFLICT (${sql.raw(key)}) DO UPDATE SET ${sql.raw(updateSet(table, columns))}`;
  };
};

const upsertExecutions = upsertStatement('engine_executions', 'id', EXECUTION_COLUMNS, executionTypesSql);
const upsertNodes = upsertStatement('engine_node_states', 'execution_id, node_id', NODE_COLUMNS, nodeTypesSql);

const upsertCounts = (counts: readonly { process_id: string; status: string; count: number }[]): RawBuilder<unknown> =>
  sql`INSERT INTO engine_execution_counts (process_id, status, count)
    SELECT process_id, status, count FROM json_to_recordset(${JSON.stringify(counts)}::json)
      AS r(process_id uuid, status text, count bigint)
    ON CONFLICT (process_id, status) DO UPDATE SET count = engine_execution_counts.count + excluded.count`;

/** Graphs not stored yet; one that is (another engine's, an earlier commit's) is left as it is. */
const insertGraphSnapshots = (snapshots: readonly { id: string; snapshot: unknown }[]): RawBuilder<unknown> => {
  const rowsJson = JSON.stringify(snapshots);
  const { fn, type } = jsonRecordsetFor(rowsJson);
  return sql`INSERT INTO engine_graph_snapshots (id, snapshot)
    SELECT id, snapshot::jsonb FROM ${sql.raw(fn)}(${rowsJson}::${sql.raw(type)}) AS r(id text, snapshot ${sql.raw(type)})
    ON CONFLICT (id) DO NOTHING`;
};

/** The statements that bring the tables to `rows` (only what changed), leaving out graphs `stored` already. */
function rowWrites(rows: ExecutionRowSet, stored: (graphSnapshotId: string) => boolean): RawBuilder<unknown>[] {
  const writes: RawBuilder<unknown>[] = [];
  const snapshots = [...rows.graphSnapshots].filter(([id]) => !stored(id)).map(([id, snapshot]) => ({ id, snapshot }));
  if (snapshots.length > 0) writes.push(insertGraphSnapshots(snapshots));
  const executions = [...rows.changedExecutions].map((id) => rows.executions.get(id) as ExecutionRow);
  if (executions.length > 0) writes.push(upsertExecutions(executions));
  const nodes = [...rows.changedNodes].map((key) => {
    const [executionId, nodeId] = key.split('\u0000') as [string, string];
    return rows.nodes.get(executionId)?.get(nodeId) as NodeStateRow;
  });
  if (nodes.length > 0) writes.push(upsertNodes(nodes));
  // Zero deltas too (a run started and ended in one commit): the row exists as one event at a time makes it.
  const counts = [...rows.countDeltas].map(([key, delta]) => {
    const [processId, status] = key.split('\u0000') as [string, string];
    return { process_id: processId, status, count: delta };
  });
  if (counts.length > 0) writes.push(upsertCounts(counts));
  writes.push(
    ...executionStatsWrites([...rows.finishedExecutions].map((id) => rows.executions.get(id) as ExecutionRow)),
  );
  return writes;
}

/**
 * Runs writes to different tables (or disjoint rows) as one statement: one round trip, one
 * snapshot, so no write may depend on another's effect.
 */
async function writeTogether(trx: Trx, writes: readonly RawBuilder<unknown>[]): Promise<void> {
  if (writes.length === 0) return;
  if (writes.length === 1) {
    await (writes[0] as RawBuilder<unknown>).execute(trx);
    return;
  }
  const parts = writes.map((write, index) => sql`${sql.raw(`w${index}`)} AS (${write})`);
  await sql`WITH ${sql.join(parts)} SELECT 1`.execute(trx);
}

/**
 * Rows that are the whole record of a completed execution: its stream began in this commit (so
 * no column is left as stored before), it completed, and no value is in blob storage.
 */
const writtenWhole = (
  execution: ExecutionRow,
  nodes: Iterable<NodeStateRow>,
  firstVersion: number | undefined,
): boolean => {
  if (firstVersion !== 1 || execution.status !== 'completed' || execution.input_ref || execution.output_ref)
    return false;
  for (const node of nodes) if (node.output_ref) return false;
  return true;
};

/**
 * The statements that apply every execution event of a commit (others are ignored), rows read
 * (or taken from the cache) and folded already, and what to call once the transaction
 * committed: it hands the rows to the cache (nothing is cached from a rolled-back transaction).
 * Undefined when rows must be read and no `reader` is given (see `loadRows`).
 */
export async function executionEventWrites(
  reader: Db | undefined,
  stored: readonly StoredEvent[],
  cache?: ExecutionRowCache,
  finished?: RecentlyFinishedRows,
): Promise<{ statements: RawBuilder<unknown>[]; afterCommit: () => void } | undefined> {
  const graphs = await withStartGraphs(reader, stored, (type) => EXECUTION_TYPES.has(type), cache);
  if (!graphs) return undefined;
  const { events, recorded, stored: graphsStored } = graphs;
  if (events.length === 0 && recorded.size === 0) return { statements: [], afterCommit: () => undefined };
  const rows = await loadRows(reader, events, cache);
  if (!rows) return undefined;
  for (const [id, snapshot] of recorded) rows.graphSnapshots.set(id, snapshot);
  for (const { event } of events) applyToRows(rows, event);
  const lastVersion = new Map<string, number>();
  const firstVersion = new Map<string, number>();
  for (const { event, streamVersion } of events) {
    lastVersion.set(event.data.executionId, streamVersion);
    if (!firstVersion.has(event.data.executionId)) firstVersion.set(event.data.executionId, streamVersion);
  }
  return {
    statements: [
      ...rowWrites(rows, (id) => graphsStored.has(id) || cache?.graphSnapshot(id) !== undefined),
      ...errorWebhookDeliveryWrites(stored),
    ],
    afterCommit: () => {
      for (const [id, snapshot] of rows.graphSnapshots) cache?.rememberGraphSnapshot(id, snapshot);
      for (const [id, version] of lastVersion) {
        const execution = rows.executions.get(id);
        const nodes = rows.nodes.get(id);
        if (!execution || !nodes) continue;
        if (finished && writtenWhole(execution, nodes.values(), firstVersion.get(id)))
          finished.put(id, { execution, nodes: [...nodes.values()] });
        cache?.put(id, version, execution, nodes);
      }
    },
  };
}

/** Applies every execution event of a commit (others are ignored) with one statement. */
export async function applyExecutionEvents(trx: Trx, stored: readonly StoredEvent[]): Promise<void> {
  const writes = await executionEventWrites(trx, stored);
  if (writes) await writeTogether(trx, writes.statements);
}

export const executionsProjection: Projection = {
  name: 'engine-executions',
  eventTypes: [...EXECUTION_EVENT_TYPES, GRAPH_SNAPSHOT_RECORDED],
  async apply(trx, event) {
    await applyExecutionEvents(trx, [event]);
  },
  async reset(trx) {
    await sql`DELETE FROM engine_node_states`.execute(trx);
    await sql`DELETE FROM engine_executions`.execute(trx);
    await sql`DELETE FROM engine_execution_counts`.execute(trx);
    await sql`DELETE FROM engine_graph_snapshots`.execute(trx);
    for (const statement of resetExecutionStats) await statement.execute(trx);
    await resetErrorWebhookDeliveries.execute(trx);
  },
};
