import { GRAPH_SNAPSHOT_RECORDED, type GraphSnapshot, type GraphSnapshotRecordedData } from '@weft/contracts';
import type { Db, StoredEvent } from '@weft/event-store';
import type { ExecutionEvent } from '../domain/execution/events.js';
import type { ExecutionRowCache } from './execution-row-cache.js';

/**
 * The read model folds an ExecutionStarted into a row per node of its graph, but since schema
 * version 3 the event names its graph (`graphSnapshotId`) instead of carrying it: the graph is
 * recorded once, by a GraphSnapshotRecorded event committed with or before the first start that
 * names it. Before a batch is folded, each such start gets its graph back, from the batch's own
 * recordings, from the row cache (graphs this engine committed), or from `engine_graph_snapshots`
 * (which every recording fills, a rebuild too, in position order).
 */
export interface StartGraphs {
  /** The batch's execution events, each ExecutionStarted carrying its graph. */
  events: { event: ExecutionEvent; streamVersion: number }[];
  /** Graphs the batch records, by id: stored unless already there. */
  recorded: Map<string, GraphSnapshot>;
  /** Ids of graphs found stored already (in the cache or the table): not sent again. */
  stored: Set<string>;
}

/**
 * Undefined when a graph must be read and there is no `reader` (the caller folds again inside the
 * transaction). Throws when a start names a graph that is nowhere on record.
 */
export async function withStartGraphs(
  reader: Db | undefined,
  stored: readonly StoredEvent[],
  isExecutionEvent: (type: string) => boolean,
  cache: ExecutionRowCache | undefined,
): Promise<StartGraphs | undefined> {
  const recorded = new Map<string, GraphSnapshot>();
  const events: StartGraphs['events'] = [];
  const named = new Map<string, GraphSnapshot | undefined>();
  for (const event of stored) {
    if (event.type === GRAPH_SNAPSHOT_RECORDED) {
      const data = event.data as GraphSnapshotRecordedData;
      recorded.set(data.graphSnapshotId, data.graphSnapshot);
      continue;
    }
    if (!isExecutionEvent(event.type)) continue;
    const execution = { type: event.type, data: event.data } as ExecutionEvent;
    events.push({ event: execution, streamVersion: event.streamVersion });
    if (execution.type === 'ExecutionStarted' && !execution.data.graphSnapshot)
      named.set(execution.data.graphSnapshotId, undefined);
  }
  const known = new Set<string>();
  if (named.size === 0) return { events, recorded, stored: known };
  const missing: string[] = [];
  for (const id of named.keys()) {
    const cached = recorded.has(id) ? undefined : (cache?.graphSnapshot(id) as GraphSnapshot | undefined);
    if (cached) known.add(id);
    const graph = recorded.get(id) ?? cached;
    if (graph) named.set(id, graph);
    else missing.push(id);
  }
  if (missing.length > 0) {
    if (!reader) return undefined;
    const rows = await reader
      .selectFrom('engine_graph_snapshots')
      .select(['id', 'snapshot'])
      .where('id', 'in', missing)
      .execute();
    for (const row of rows) {
      named.set(String(row.id), row.snapshot as GraphSnapshot);
      known.add(String(row.id));
    }
  }
  for (const entry of events) {
    const { event } = entry;
    if (event.type !== 'ExecutionStarted' || event.data.graphSnapshot) continue;
    const graph = named.get(event.data.graphSnapshotId);
    if (!graph)
      throw new Error(
        `graph snapshot ${event.data.graphSnapshotId} of execution ${event.data.executionId} is not on record`,
      );
    entry.event = { type: 'ExecutionStarted', data: { ...event.data, graphSnapshot: graph } };
  }
  return { events, recorded, stored: known };
}
