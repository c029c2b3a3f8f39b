import type { IterationPath, NodeInputSource, StoredValueRef, TokenUsage } from '@weft/contracts';
import type { ExecutionAcceptedData, ExecutionEvent } from '../domain/execution/events.js';
import { graphSnapshotId } from '../domain/graph/graph-snapshot-ids.js';

/**
 * The execution read model's rows and how one event changes them, pure. The projection folds a
 * whole commit's events over the rows it loaded and writes each changed row once, so a batch of
 * executions costs a few statements instead of one per event; a rebuild folds the same way.
 */
export interface ExecutionRow {
  id: string;
  process_id: string;
  organization_id: string;
  status: string;
  started_at: string;
  completed_at: string | null;
  duration_ms: number | null;
  error_message: string | null;
  triggered_by_user_id: string | null;
  trigger_node_id: string;
  attempt: number;
  failed_node_id: string | null;
  failed_node_name: string | null;
  input_data: unknown;
  output_data: unknown;
  /**
   * The graph as the run started with it: in memory only (an answer built from the rows), never
   * written; the table keeps `graph_snapshot_id` and the snapshot is stored once under it.
   */
  graph_snapshot: unknown;
  /** Key of the graph in `engine_graph_snapshots` (graph-snapshot-ids.ts). */
  graph_snapshot_id: string | null;
  /** Blob references of `input_data` / `output_data` when they were too large to store inline. */
  input_ref: StoredValueRef | null;
  output_ref: StoredValueRef | null;
  /** Accepted and waiting in the work queue (ExecutionAccepted, no ExecutionStarted yet). */
  queued: boolean;
}

export interface NodeStateRow {
  execution_id: string;
  node_id: string;
  position: number;
  node_name: string;
  node_type: string;
  status: string;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  input_data: unknown;
  output_data: unknown;
  error: string | null;
  iterations: number | null;
  /** Where the input comes from (NodeStarted v2); `input_data` holds it only for version 1 events. */
  input_from: NodeInputOrigin | undefined | null;
  output_ref: StoredValueRef | null;
  token_usage: TokenUsage | null;
}

/** The references of the node's last run, resolved into its input when read. */
export interface NodeInputOrigin {
  inputFrom: NodeInputSource[];
  iteration?: IterationPath;
  loopItem?: unknown;
  loopItemRef?: StoredValueRef;
}

/** Rows touched by a batch, keyed by execution id (and node id). */
export interface ExecutionRowSet {
  executions: Map<string, ExecutionRow>;
  nodes: Map<string, Map<string, NodeStateRow>>;
  changedExecutions: Set<string>;
  /** `${executionId}\u0000${nodeId}` of node rows to write. */
  changedNodes: Set<string>;
  /** Count changes per `${processId}\u0000${status}`. */
  countDeltas: Map<string, number>;
  /** Executions that left `running` (each does once): what they add to the statistics tables. */
  finishedExecutions: Set<string>;
  /** Graph snapshots the batch's rows name, by id: stored unless already there. */
  graphSnapshots: Map<string, object>;
}

export const emptyRowSet = (): ExecutionRowSet => ({
  executions: new Map(),
  nodes: new Map(),
  changedExecutions: new Set(),
  changedNodes: new Set(),
  countDeltas: new Map(),
  finishedExecutions: new Set(),
  graphSnapshots: new Map(),
});

/** Sets the row's graph and names it for storing. */
const withGraph = (
  rows: ExecutionRowSet,
  row: ExecutionRow,
  snapshot: object,
  id: string | undefined,
): ExecutionRow => {
  row.graph_snapshot = snapshot;
  row.graph_snapshot_id = id ?? graphSnapshotId(snapshot);
  rows.graphSnapshots.set(row.graph_snapshot_id, snapshot);
  return row;
};

/** What a queued execution shows as its graph until it starts. */
const NO_GRAPH_YET = Object.freeze({ nodes: Object.freeze([]), edges: Object.freeze([]) });

const TERMINAL_STATUS = {
  ExecutionCompleted: 'completed',
  ExecutionFailed: 'failed',
  ExecutionTimedOut: 'timeout',
  ExecutionCancelled: 'cancelled',
} as const;

const moveCount = (rows: ExecutionRowSet, processId: string, from: string | null, to: string): void => {
  if (from)
    rows.countDeltas.set(`${processId}\u0000${from}`, (rows.countDeltas.get(`${processId}\u0000${from}`) ?? 0) - 1);
  rows.countDeltas.set(`${processId}\u0000${to}`, (rows.countDeltas.get(`${processId}\u0000${to}`) ?? 0) + 1);
};

/**
 * A large JSON column an event does not carry (a value in blob storage, an input given as
 * references) keeps what the row holds: as the table keeps it (COALESCE) when the row was written
 * by an earlier commit, and as folded when an earlier event of the same commit set it (a run
 * started and ended in one commit), so the rows do not depend on where commits cut the events.
 */
function setCarried<Row, Column extends keyof Row>(row: Row, column: Column, value: Row[Column] | undefined): void {
  if (value !== undefined) row[column] = value;
}

/** What a node row takes from a run's start: NodeStarted, or the start its NodeCompleted or NodeFailed carries. */
interface StartOfRun {
  inputFrom?: NodeInputSource[];
  inputData?: unknown;
  iteration?: IterationPath;
  loopItem?: unknown;
  loopItemRef?: StoredValueRef;
}

function startNodeRow(row: NodeStateRow, startedAt: string, d: StartOfRun): void {
  row.status = 'running';
  row.started_at = startedAt;
  row.completed_at = null;
  row.duration_ms = null;
  setCarried(row, 'input_data', d.inputData);
  if (d.inputFrom !== undefined && d.inputData === undefined)
    row.input_from = {
      inputFrom: d.inputFrom,
      ...(d.iteration ? { iteration: d.iteration } : {}),
      ...(d.loopItem === undefined ? {} : { loopItem: d.loopItem }),
      ...(d.loopItemRef ? { loopItemRef: d.loopItemRef } : {}),
    };
  row.error = null;
  row.token_usage = null;
  if ((d.iteration?.length ?? 0) > 0) row.iterations = (row.iterations ?? 0) + 1;
}

function updateNode(
  rows: ExecutionRowSet,
  executionId: string,
  nodeId: string,
  change: (row: NodeStateRow) => void,
): void {
  const row = rows.nodes.get(executionId)?.get(nodeId);
  if (!row) return;
  change(row);
  rows.changedNodes.add(`${executionId}\u0000${nodeId}`);
}

function finish(rows: ExecutionRowSet, executionId: string, status: string, change: (row: ExecutionRow) => void): void {
  const row = rows.executions.get(executionId);
  if (!row || row.status !== 'running') return;
  row.status = status;
  row.queued = false;
  change(row);
  rows.changedExecutions.add(executionId);
  rows.finishedExecutions.add(executionId);
  moveCount(rows, row.process_id, 'running', status);
  // Nodes still running when the execution ended were stopped with it.
  for (const node of rows.nodes.get(executionId)?.values() ?? []) {
    if (node.status === 'running') updateNode(rows, executionId, node.node_id, (n) => (n.status = 'cancelled'));
  }
}

const ms = (seconds: number): number => Math.round(seconds * 1000);

/** A running execution's row as ExecutionAccepted and ExecutionStarted both begin it (no input or graph yet). */
const runningRow = (
  d: Pick<
    ExecutionAcceptedData,
    'executionId' | 'processId' | 'organizationId' | 'triggeredByUserId' | 'triggerNodeId'
  >,
  startedAt: string,
): ExecutionRow => ({
  id: d.executionId,
  process_id: d.processId,
  organization_id: d.organizationId,
  status: 'running',
  started_at: startedAt,
  completed_at: null,
  duration_ms: null,
  error_message: null,
  triggered_by_user_id: d.triggeredByUserId,
  trigger_node_id: d.triggerNodeId,
  attempt: 1,
  failed_node_id: null,
  failed_node_name: null,
  input_data: null,
  output_data: null,
  graph_snapshot: null,
  graph_snapshot_id: null,
  input_ref: null,
  output_ref: null,
  queued: false,
});

export function applyToRows(rows: ExecutionRowSet, event: ExecutionEvent): void {
  switch (event.type) {
    case 'ExecutionAccepted': {
      const d = event.data;
      if (rows.executions.has(d.executionId)) return;
      // No graph yet, none named: an engine of the previous version that starts it writes its graph inline.
      rows.executions.set(d.executionId, {
        ...runningRow(d, d.acceptedAt),
        graph_snapshot: NO_GRAPH_YET,
        queued: true,
      });
      rows.nodes.set(d.executionId, new Map());
      rows.changedExecutions.add(d.executionId);
      moveCount(rows, d.processId, null, 'running');
      return;
    }
    case 'ExecutionStarted': {
      const d = event.data;
      // Found by id before the fold (executions-projection.ts) when the event only names it.
      const graph = d.graphSnapshot;
      if (!graph) throw new Error(`ExecutionStarted of ${d.executionId} reached the read model without its graph`);
      const queued = rows.executions.get(d.executionId);
      // An accepted row (already counted as running) gets what the start knows; any other is left as it is.
      if (queued && !(queued.queued && queued.status === 'running')) return;
      rows.executions.set(
        d.executionId,
        withGraph(
          rows,
          { ...runningRow(d, d.startedAt), input_data: d.inputData, input_ref: d.inputDataRef ?? null, queued: false },
          graph,
          d.graphSnapshotId,
        ),
      );
      rows.changedExecutions.add(d.executionId);
      const nodes = new Map<string, NodeStateRow>();
      graph.nodes.forEach((node, position) => {
        nodes.set(node.id, {
          execution_id: d.executionId,
          node_id: node.id,
          position,
          node_name: typeof node.config.label === 'string' ? node.config.label : node.id,
          node_type: node.type,
          status: 'pending',
          started_at: null,
          completed_at: null,
          duration_ms: null,
          input_data: null,
          output_data: null,
          error: null,
          iterations: null,
          input_from: null,
          output_ref: null,
          token_usage: null,
        });
        rows.changedNodes.add(`${d.executionId}\u0000${node.id}`);
      });
      rows.nodes.set(d.executionId, nodes);
      if (!queued) moveCount(rows, d.processId, null, 'running');
      return;
    }
    case 'NodeStarted': {
      const d = event.data;
      updateNode(rows, d.executionId, d.nodeId, (row) => startNodeRow(row, d.startedAt, d));
      return;
    }
    case 'NodeCompleted': {
      const d = event.data;
      updateNode(rows, d.executionId, d.nodeId, (row) => {
        if (d.startedAt !== undefined) startNodeRow(row, d.startedAt, d);
        row.status = 'completed';
        row.completed_at = d.completedAt;
        row.duration_ms = d.durationMs;
        setCarried(row, 'output_data', d.outputData);
        row.output_ref = d.outputDataRef ?? null;
        row.token_usage = d.tokenUsage ?? null;
      });
      return;
    }
    case 'NodeFailed': {
      const d = event.data;
      updateNode(rows, d.executionId, d.nodeId, (row) => {
        if (d.startedAt !== undefined) startNodeRow(row, d.startedAt, d);
        row.status = 'failed';
        row.completed_at = d.completedAt;
        row.duration_ms = d.durationMs;
        row.error = d.error;
      });
      return;
    }
    case 'NodeSkipped': {
      const d = event.data;
      // A body node skipped in one iteration may have run in another: keep the richer state.
      if (rows.nodes.get(d.executionId)?.get(d.nodeId)?.status !== 'pending') return;
      updateNode(rows, d.executionId, d.nodeId, (row) => {
        row.status = 'skipped';
        row.completed_at = d.skippedAt;
      });
      return;
    }
    case 'ExecutionRetryScheduled': {
      const row = rows.executions.get(event.data.executionId);
      if (!row) return;
      row.attempt = event.data.attempt;
      rows.changedExecutions.add(row.id);
      return;
    }
    case 'ExecutionCompleted': {
      const d = event.data;
      finish(rows, d.executionId, TERMINAL_STATUS[event.type], (row) => {
        row.completed_at = d.completedAt;
        row.duration_ms = ms(d.durationSeconds);
        setCarried(row, 'output_data', d.outputData);
        row.output_ref = d.outputDataRef ?? null;
      });
      return;
    }
    case 'ExecutionFailed': {
      const d = event.data;
      finish(rows, d.executionId, TERMINAL_STATUS[event.type], (row) => {
        row.completed_at = d.completedAt;
        row.duration_ms = ms(d.durationSeconds);
        row.error_message = d.errorMessage;
        row.failed_node_id = d.failedNode?.id ?? null;
        row.failed_node_name = d.failedNode?.name ?? null;
        row.attempt = d.attempt;
      });
      return;
    }
    case 'ExecutionTimedOut': {
      const d = event.data;
      finish(rows, d.executionId, TERMINAL_STATUS[event.type], (row) => {
        row.completed_at = d.completedAt;
        row.duration_ms = ms(d.durationSeconds);
        row.error_message = d.errorMessage;
      });
      return;
    }
    case 'ExecutionCancelled': {
      const d = event.data;
      finish(rows, d.executionId, TERMINAL_STATUS[event.type], (row) => {
        row.completed_at = d.completedAt;
        row.duration_ms = ms(d.durationSeconds);
      });
      return;
    }
    // Resumes, parking and webhook deliveries leave these rows as they are.
    case 'ExecutionResumed':
    case 'ExecutionParked':
    case 'ErrorWebhookDeliveryScheduled':
    case 'ErrorWebhookDeliveryAttempted':
      return;
    default: {
      const unknown: never = event;
      throw new Error(`unknown execution event ${JSON.stringify(unknown)}`);
    }
  }
}
