import { MapLettingGo } from '@weft/collections';
import type { ExecutionRow, NodeStateRow } from './execution-rows.js';

/** The complete read-model rows of an execution, as its one commit wrote them. */
export interface FinishedRows {
  execution: ExecutionRow;
  nodes: NodeStateRow[];
}

/**
 * Rows of executions written whole by one commit (started and completed in it, every value
 * inline), kept for the synchronous caller waiting for them: it answers from these instead of
 * reading back what it just wrote. `take` removes the entry; entries no one takes (a caller that
 * stopped waiting) give way to newer ones beyond `maxEntries`. A MapLettingGo: a Map's discarded
 * hash tables would keep every run's rows alive until the next full collection.
 */
export class RecentlyFinishedRows {
  private readonly entries = new MapLettingGo<string, FinishedRows>();

  constructor(private readonly maxEntries = 1000) {}

  get size(): number {
    return this.entries.size;
  }

  /** Keeps the rows (call only after the commit that wrote them). */
  put(executionId: string, rows: FinishedRows): void {
    this.entries.delete(executionId);
    this.entries.set(executionId, rows);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.firstKey() as string);
  }

  take(executionId: string): FinishedRows | undefined {
    const rows = this.entries.get(executionId);
    this.entries.delete(executionId);
    return rows;
  }
}
