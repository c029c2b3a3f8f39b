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
  private readonly entries = new Map<string, CachedExecutionRows & { version: number }>();
  /** Ids of graph snapshots committed to `engine_graph_snapshots`, least recently used first. */
  private readonly graphSnapshots = new Set<string>();

  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxGraphSnapshots = 1_000,
  ) {}

  /** Whether the graph snapshot `id` is known to be stored (then a commit need not send it). */
  hasGraphSnapshot(id: string): boolean {
    if (!this.graphSnapshots.delete(id)) return false;
    this.graphSnapshots.add(id);
    return true;
  }

  /** Notes that the graph snapshot `id` is stored (call only after the commit that stored it or found it). */
  rememberGraphSnapshot(id: string): void {
    this.graphSnapshots.delete(id);
    this.graphSnapshots.add(id);
    if (this.graphSnapshots.size > this.maxGraphSnapshots)
      this.graphSnapshots.delete(this.graphSnapshots.values().next().value as string);
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
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  clear(): void {
    this.entries.clear();
    this.graphSnapshots.clear();
  }
}
