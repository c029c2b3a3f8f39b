import { MapLettingGo } from '@weft/collections';
import { graphSnapshotBytes } from '../domain/graph/graph-snapshot-ids.js';
import type { ExecutionRow, NodeStateRow } from './execution-rows.js';

/**
 * The read-model rows of executions this engine is running, as its last commit left them, so a
 * group commit need not read them back. An entry is valid only for the stream version it was
 * stored at: when another engine wrote to the stream in between (a cancel), the versions do
 * not line up and the rows are read from the tables instead. `take` removes the entry, so a
 * transaction that rolls back leaves nothing stale behind. Finished executions are not kept.
 */
export interface CachedExecutionRows {
  execution: ExecutionRow;
  nodes: Map<string, NodeStateRow>;
}

/** Written once and kept by COALESCE: a cached row carries none, exactly like a row read back. */
const clearLargeColumns = (row: { input_data: unknown; output_data: unknown }): void => {
  row.input_data = undefined;
  row.output_data = undefined;
};

export class ExecutionRowCache {
  /** A MapLettingGo: a Map's discarded hash tables would keep taken rows alive until the next full collection. */
  private readonly entries = new MapLettingGo<string, CachedExecutionRows & { version: number }>();
  /**
   * Graph snapshots committed to `engine_graph_snapshots`, by id, least recently used first, with
   * their JSON's bytes: a start that names one is folded without reading it back. Bounded by
   * count and by bytes (a graph may be megabytes).
   */
  private readonly graphSnapshots = new Map<string, { snapshot: unknown; bytes: number }>();
  private graphSnapshotBytes = 0;

  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxGraphSnapshots = 1_000,
    private readonly maxGraphSnapshotBytes = 32 * 1024 * 1024,
  ) {}

  /** The graph snapshot `id` when it is known to be stored (then a commit need not send it, nor read it). */
  graphSnapshot(id: string): unknown {
    const entry = this.graphSnapshots.get(id);
    if (entry === undefined) return undefined;
    this.graphSnapshots.delete(id);
    this.graphSnapshots.set(id, entry);
    return entry.snapshot;
  }

  /** Notes that the graph snapshot `id` is stored (call only after the commit that stored it or found it). */
  rememberGraphSnapshot(id: string, snapshot: object): void {
    if (this.graphSnapshot(id) !== undefined) return;
    // Measured when first remembered (a new graph: rare); a revision's frozen snapshot only once.
    const bytes = graphSnapshotBytes(snapshot);
    if (bytes > this.maxGraphSnapshotBytes) return;
    this.graphSnapshots.set(id, { snapshot, bytes });
    this.graphSnapshotBytes += bytes;
    while (this.graphSnapshots.size > this.maxGraphSnapshots || this.graphSnapshotBytes > this.maxGraphSnapshotBytes) {
      const [oldest, { bytes: freed }] = this.graphSnapshots.entries().next().value as [string, { bytes: number }];
      this.graphSnapshots.delete(oldest);
      this.graphSnapshotBytes -= freed;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether `take(executionId, version)` would return rows (it leaves the entry). */
  has(executionId: string, version: number): boolean {
    return this.entries.get(executionId)?.version === version;
  }

  /** The rows of `executionId` if they are as of stream version `version`; removes the entry either way. */
  take(executionId: string, version: number): CachedExecutionRows | undefined {
    const entry = this.entries.get(executionId);
    if (!entry) return undefined;
    this.entries.delete(executionId);
    return entry.version === version ? entry : undefined;
  }

  /** Keeps the rows as committed at stream version `version` (call only after the commit). */
  put(executionId: string, version: number, execution: ExecutionRow, nodes: Map<string, NodeStateRow>): void {
    this.entries.delete(executionId);
    if (execution.status !== 'running') return;
    clearLargeColumns(execution);
    execution.graph_snapshot = undefined;
    for (const node of nodes.values()) {
      clearLargeColumns(node);
      node.input_from = undefined;
    }
    this.entries.set(executionId, { version, execution, nodes });
    // Oldest first: executions parked longest are the least likely to write soon.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.firstKey() as string);
  }

  clear(): void {
    this.entries.clear();
    this.graphSnapshots.clear();
    this.graphSnapshotBytes = 0;
  }
}
