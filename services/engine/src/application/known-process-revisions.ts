import type { StoredEvent } from '@weft/event-store';
import { PROCESS_STREAM_PREFIX } from '../domain/graph/process-stream.js';

const DEFAULT_MAX_PROCESSES = 10_000;

/**
 * The current revision of each process (the version of its catalog stream) kept in memory, for a
 * database only this process's store appends to (embedded Weft): every commit of that store is
 * heard (`observe`), so after one read a process's revision is known without asking the database
 * before each run. Exact only with a single writer: the store reports appends whose outcome it
 * cannot know as `undefined`, which forgets everything (the next run of each process reads
 * again); it does not listen for other processes' appends on such a database, since there are none. With several writers (distributed Weft) a commit
 * elsewhere is heard only later, so each run reads (`processRevisions`).
 */
export class KnownProcessRevisions {
  private readonly known = new Map<string, number>();
  /**
   * Moves on each forgetting and each eviction: a read that began before it is answered but not
   * kept (a commit heard meanwhile may have been forgotten, and the read may be older than it).
   */
  private generation = 0;

  constructor(
    private readonly read: (processId: string) => Promise<number>,
    private readonly maxProcesses = DEFAULT_MAX_PROCESSES,
  ) {}

  /** A commit of the store (its events), or `undefined` when what was committed is unknown. */
  observe(events: readonly StoredEvent[] | undefined): void {
    if (!events) {
      this.known.clear();
      this.generation += 1;
      return;
    }
    for (const event of events) {
      if (!event.streamId.startsWith(PROCESS_STREAM_PREFIX)) continue;
      // Appends are serialized and this store is the only writer: the version just committed is the latest.
      this.remember(event.streamId.slice(PROCESS_STREAM_PREFIX.length), event.streamVersion);
    }
  }

  async revisionOf(processId: string): Promise<number> {
    const known = this.known.get(processId);
    if (known !== undefined) return known;
    const generation = this.generation;
    const read = await this.read(processId);
    if (generation !== this.generation) return read;
    // A commit heard while the read was under way may be newer than what the read saw.
    return this.remember(processId, read);
  }

  private remember(processId: string, revision: number): number {
    const latest = Math.max(revision, this.known.get(processId) ?? 0);
    this.known.delete(processId);
    this.known.set(processId, latest);
    if (this.known.size > this.maxProcesses) {
      this.known.delete(this.known.keys().next().value as string);
      this.generation += 1;
    }
    return latest;
  }
}
