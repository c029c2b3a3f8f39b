import { WrongExpectedVersionError, type NewEvent, type StreamAppend } from '@weft/event-store';

/**
 * Group commit for execution events: appends from every running execution are gathered while
 * the previous transaction commits and written together with one `appendMany` (one transaction,
 * inline projections included). A run awaits only the commits it needs (its start, its end),
 * not one commit per node. `commit` writes one batch in one transaction (the store's appendMany,
 * or the engine's own transaction that also updates its read models and leases). When a batch fails on one stream's expected version, the streams are
 * retried one by one so only the stream that changed elsewhere (a cancel) sees the conflict.
 */
interface PendingAppend extends StreamAppend {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Writes appends to several streams in one transaction, all or nothing. */
export type CommitBatch = (batch: readonly StreamAppend[]) => Promise<void>;

export interface ExecutionEventWriterOptions {
  /** Upper bound of events in one transaction. */
  maxBatchEvents?: number;
}

export class ExecutionEventWriter {
  private queue: PendingAppend[] = [];
  private flushing: Promise<void> | null = null;
  private readonly maxBatchEvents: number;

  constructor(
    private readonly commit: CommitBatch,
    options: ExecutionEventWriterOptions = {},
  ) {
    this.maxBatchEvents = options.maxBatchEvents ?? 5000;
  }

  /** Queues an append; resolves when it is committed. `expectedVersion` is the stream's version before it. */
  append(streamId: string, events: NewEvent[], expectedVersion: number | 'no_stream'): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ streamId, events, expectedVersion, resolve, reject });
      this.flushing ??= this.drain();
    });
  }

  /** Resolves when everything queued so far is written (or failed). */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async drain(): Promise<void> {
    // Let the current tick's appends (concurrent nodes, other executions) join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        const batch = this.takeBatch();
        await this.write(batch);
      }
    } finally {
      this.flushing = null;
    }
  }

  private takeBatch(): PendingAppend[] {
    let events = 0;
    let count = 0;
    while (
      count < this.queue.length &&
      (count === 0 || events + (this.queue[count] as PendingAppend).events.length <= this.maxBatchEvents)
    ) {
      events += (this.queue[count] as PendingAppend).events.length;
      count++;
    }
    return this.queue.splice(0, count);
  }

  private async write(batch: PendingAppend[]): Promise<void> {
    try {
      await this.commit(batch.map(({ streamId, events, expectedVersion }) => ({ streamId, events, expectedVersion })));
      for (const item of batch) item.resolve();
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError) || batch.length === 1) {
        for (const item of batch) item.reject(error);
        return;
      }
      // Isolate the conflicting stream; a stream that failed takes its later appends down with it.
      const failed = new Map<string, unknown>();
      for (const item of batch) {
        const earlier = failed.get(item.streamId);
        if (earlier) {
          item.reject(earlier);
          continue;
        }
        try {
          await this.commit([{ streamId: item.streamId, events: item.events, expectedVersion: item.expectedVersion }]);
          item.resolve();
        } catch (single) {
          failed.set(item.streamId, single);
          item.reject(single);
        }
      }
    }
  }
}
