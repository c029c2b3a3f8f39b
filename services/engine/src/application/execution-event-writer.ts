import { WrongExpectedVersionError, type NewEvent, type StreamAppend, type StreamAtVersion } from '@weft/event-store';

/**
 * Group commit for execution events: appends from every running execution are gathered while
 * the previous transactions commit (up to BATCHES_IN_FLIGHT at once) and written together with
 * one `appendMany` (one transaction, inline projections included). A run awaits only the commits
 * it needs (its start, its end), not one commit per node. `commit` writes one batch in one transaction (the store's appendMany,
 * or the engine's own transaction that also updates its read models and leases). When a batch
 * fails for any reason, its streams are retried one by one, so only the stream at fault (one that
 * changed elsewhere, or holds a value the database refuses) fails, and the others are not stalled.
 */
interface PendingAppend extends StreamAppend {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** No caller waits for it yet (see `append`): it does not count towards an early send. */
  lazy: boolean; /** Other streams' versions the append holds only with (`StreamAppend.requires`). */
  requires?: readonly StreamAtVersion[];
  /** Written before it in the same commit, unless its stream exists (a start's graph, graph-snapshot-records.ts). */
  before?: StreamAppend;
}

/**
 * The database refused the data of this append (a value jsonb cannot hold, a constraint, a size
 * limit), not the moment: writing it again would fail again, so its execution must end.
 */
export class AppendRefusedError extends Error {
  override name = 'AppendRefusedError';
  /** The refused events; not enumerable, so logging the error does not log the (user) data. */
  declare readonly events: readonly NewEvent[];

  constructor(
    readonly streamId: string,
    events: readonly NewEvent[],
    readonly sqlState: string,
    cause: unknown,
  ) {
    super(`the database refused the events of ${streamId} (SQLSTATE ${sqlState})`, { cause });
    Object.defineProperty(this, 'events', { value: events, enumerable: false });
  }
}

/** Writes appends to several streams in one transaction, all or nothing. */
export type CommitBatch = (batch: readonly StreamAppend[]) => Promise<void>;

export interface ExecutionEventWriterOptions {
  /** Upper bound of events in one transaction. */
  maxBatchEvents?: number;
  /**
   * Appends queued (callers waiting) that are sent at once, without waiting for the end of the
   * event loop's turn, while a commit slot is free; default EAGER_BATCH_APPENDS.
   */
  eagerBatchAppends?: number;
  /** How long an append no one waits for yet may wait for company before it is written; default 10 ms. */
  lazyMs?: number;
}

/** The default of `lazyMs`. */
export const DEFAULT_LAZY_APPEND_MS = 10;

/**
 * Batches being committed at once. The append lock still has PostgreSQL commit them one after
 * the other, but the second is sent while the first commits: it waits for the lock in the
 * database and starts the moment the first commits, not a round trip and a busy turn of this
 * process's event loop later. A stream is never in two batches at once, so each batch's version
 * checks hold whichever of them commits first.
 */
const BATCHES_IN_FLIGHT = 2;

/**
 * A batch normally leaves at the end of the event loop's turn, with everything the turn appended.
 * Under load one turn can hold every request in flight (50 runs at c=50), and the process then
 * alternated with PostgreSQL instead of working beside it: one batch of all runs committed while
 * the next wave waited, then the wave ran while the database idled (strace of the two backends:
 * 422 KB batches, then 9 KB ones). Sending once this many appends wait keeps the database busy
 * while the rest of the turn runs: c=50 went from 460-490 to 550-590 requests/s
 * (docs/performance.md).
 */
export const EAGER_BATCH_APPENDS = 16;

export class ExecutionEventWriter {
  private queue: PendingAppend[] = [];
  private flushing: Promise<void> | null = null;
  private lazyTimer: NodeJS.Timeout | null = null;
  /** A committed batch whose callers go on once the next batch is sent (see `write`). */
  private committedUnresolved: PendingAppend[] | null = null;
  /** Streams with appends in a batch being written: their later appends wait for the next batch. */
  private readonly streamsInFlight = new Set<string>();
  /** Batches being written (at most BATCHES_IN_FLIGHT). */
  private writing = 0;
  private sendScheduled = false;
  /** Resolves `flushing` once the drain has ended. */
  private drained: () => void = () => undefined;
  private readonly maxBatchEvents: number;
  private readonly eagerBatchAppends: number;
  private readonly lazyMs: number;

  constructor(
    private readonly commit: CommitBatch,
    options: ExecutionEventWriterOptions = {},
  ) {
    this.maxBatchEvents = options.maxBatchEvents ?? 5000;
    this.eagerBatchAppends = options.eagerBatchAppends ?? EAGER_BATCH_APPENDS;
    this.lazyMs = options.lazyMs ?? DEFAULT_LAZY_APPEND_MS;
  }

  /**
   * Queues an append; resolves when it is committed. `expectedVersion` is the stream's version
   * before it. A `lazy` append (a node's events, which no caller waits for) starts no commit of its
   * own for up to `lazyMs`: the run's next events, or its end, usually join it in one commit
   * instead of one commit each; `expedite` writes it at once. `requires`: see `StreamAppend.requires`.
   * `before`: an append that makes a new stream (`no_stream`), committed with this one, before it,
   * in every commit that holds it (a retry too); left out once its stream is found to exist.
   */
  append(
    streamId: string,
    events: NewEvent[],
    expectedVersion: number | 'no_stream',
    options: { lazy?: boolean; requires?: readonly StreamAtVersion[]; before?: StreamAppend } = {},
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const { requires, before } = options;
      const lazy = options.lazy === true;
      this.queue.push({ streamId, events, expectedVersion, resolve, reject, lazy, requires, before });
      if (options.lazy) this.writeSoon();
      else this.expedite();
    });
  }

  /** Starts writing what is queued without waiting for lazy appends' company (a caller waits for it). */
  expedite(): void {
    if (this.lazyTimer) clearTimeout(this.lazyTimer);
    this.lazyTimer = null;
    if (this.queue.length === 0) return;
    if (this.flushing === null) this.flushing = this.drain();
    else if (this.writing >= BATCHES_IN_FLIGHT) return;
    else if (this.queue.length >= this.eagerBatchAppends && this.hasEagerBatch()) this.sendBatches();
    else this.sendSoon();
  }

  /**
   * Whether the batch that could be sent now holds `eagerBatchAppends` appends that callers wait
   * for: lazy ones, and ones held behind a batch being written, would make it a small batch that
   * takes a commit slot from the waiting callers. Looks at the head of the queue only, so a busy
   * turn's appends do not each scan everything queued.
   */
  private hasEagerBatch(): boolean {
    let waiting = 0;
    const held = new Set<string>();
    const scanned = Math.min(this.queue.length, 16 * this.eagerBatchAppends);
    for (let index = 0; index < scanned; index++) {
      const item = this.queue[index] as PendingAppend;
      if (held.has(item.streamId) || this.streamsInFlight.has(item.streamId)) held.add(item.streamId);
      else if (!item.lazy && ++waiting >= this.eagerBatchAppends) return true;
    }
    return false;
  }

  /** Resolves when everything queued so far is written (or failed). */
  async idle(): Promise<void> {
    this.expedite();
    while (this.flushing) await this.flushing;
  }

  /** A running drain takes lazy appends with its next batch; otherwise one starts within `lazyMs`. */
  private writeSoon(): void {
    if (this.flushing || this.lazyTimer) return;
    this.lazyTimer = setTimeout(() => {
      this.lazyTimer = null;
      this.flushing ??= this.drain();
    }, this.lazyMs);
  }

  /** Writes batches until nothing is queued or being written; resolves then. */
  private drain(): Promise<void> {
    const drained = Promise.withResolvers<void>();
    this.drained = drained.resolve;
    // Let the current tick's appends (concurrent nodes, other executions) join the first batch.
    this.sendSoon();
    return drained.promise;
  }

  /** Sends the next batches in the next turn of the event loop: what this turn appends joins them. */
  private sendSoon(): void {
    if (this.sendScheduled) return;
    this.sendScheduled = true;
    setImmediate(() => {
      this.sendScheduled = false;
      this.sendBatches();
    });
  }

  private sendBatches(): void {
    if (this.writing >= BATCHES_IN_FLIGHT) return;
    const batch = this.takeBatch();
    if (batch.length === 0) return this.endDrainIfIdle();
    for (const item of batch) this.streamsInFlight.add(item.streamId);
    const done = (): void => {
      for (const item of batch) this.streamsInFlight.delete(item.streamId);
      this.writing--;
      // Decided as the write ends, before its callers go on: the next batch is sent first (see
      // `write`), and once nothing is left the drain ends, so what the callers append next starts
      // a drain (or a lazy wait) of its own.
      this.sendBatches();
    };
    this.writing++;
    void this.write(batch).then(done, done);
    if (this.writing < BATCHES_IN_FLIGHT && this.queue.length > 0) this.sendSoon();
  }

  private endDrainIfIdle(): void {
    if (this.writing > 0 || this.sendScheduled) return;
    this.resolveCommitted();
    this.flushing = null;
    this.drained();
  }

  /**
   * The next batch, in queue order: at most `maxBatchEvents` (or one append), none of a stream
   * that is being written, and nothing of a stream after an append of it that waits.
   */
  private takeBatch(): PendingAppend[] {
    let events = 0;
    const batch: PendingAppend[] = [];
    const waiting: PendingAppend[] = [];
    const held = new Set<string>();
    for (const item of this.queue) {
      const full = batch.length > 0 && events + item.events.length > this.maxBatchEvents;
      if (full || held.has(item.streamId) || this.streamsInFlight.has(item.streamId)) {
        held.add(item.streamId);
        waiting.push(item);
        continue;
      }
      events += item.events.length;
      batch.push(item);
    }
    this.queue = waiting;
    return batch;
  }

  private async write(batch: PendingAppend[]): Promise<void> {
    try {
      await this.commitAppends(batch);
      // Callers go on in the order their batches committed: the one before this one first.
      this.resolveCommitted();
      if (this.queue.length === 0) return resolveAll(batch);
      // With more queued, the next batch is built and sent first: the callers' continuations
      // (answers, next steps) would otherwise run before it and hold the next commit back by as
      // long as they take (at load about a fifth of each commit's cycle). They go on in the next
      // turn of the event loop, or when the next commit is done if that comes first (a database
      // that answers within the turn), so at most one batch waits.
      this.committedUnresolved = batch;
      setImmediate(() => this.resolveCommitted());
      return;
    } catch (error) {
      this.resolveCommitted();
      if (batch.length === 1)
        return this.fail([batch[0] as PendingAppend], refusedOr(batch[0] as PendingAppend, error));
    }
    // Any failure (a conflict, a value the database refuses, ...) may be one stream's: each stream
    // is retried on its own, so only the stream at fault fails and the others commit.
    const byStream = new Map<string, PendingAppend[]>();
    for (const item of batch) {
      const items = byStream.get(item.streamId);
      if (items) items.push(item);
      else byStream.set(item.streamId, [item]);
    }
    if (byStream.size === 1) return this.writeOneByOne(batch);
    for (const items of byStream.values()) await this.writeStream(items);
  }

  /**
   * Commits the items' appends, each `before` ahead of its append. A `before` is expected to make
   * a new stream: when its stream exists already (an earlier commit, or another engine, wrote
   * it), what it would write is on record, and the commit is made again without it.
   */
  private async commitAppends(items: readonly PendingAppend[]): Promise<void> {
    for (;;) {
      try {
        return await this.commit(appendsOf(items));
      } catch (error) {
        // Only a stream found there proves the recording is stored; a conflict the store could only
        // pin on the batch's first stream (a unique violation: `actual` -1) proves nothing.
        if (!(error instanceof WrongExpectedVersionError) || error.expected !== 'no_stream' || error.actual <= 0)
          throw error;
        let dropped = false;
        for (const item of items) {
          if (item.before?.streamId !== error.streamId) continue;
          item.before = undefined;
          dropped = true;
        }
        if (!dropped) throw error;
      }
    }
  }

  private resolveCommitted(): void {
    const batch = this.committedUnresolved;
    this.committedUnresolved = null;
    if (batch) resolveAll(batch);
  }

  /** One stream's appends together; when they fail, one by one, so the first at fault is the one named. */
  private async writeStream(items: PendingAppend[]): Promise<void> {
    try {
      await this.commitAppends(items);
      for (const item of items) item.resolve();
    } catch (error) {
      if (items.length > 1 && !(error instanceof WrongExpectedVersionError)) return this.writeOneByOne(items);
      this.fail(items, refusedOr(items[0] as PendingAppend, error));
    }
  }

  /** One stream's appends in order; the first that fails takes the later ones down with it. */
  private async writeOneByOne(items: PendingAppend[]): Promise<void> {
    let failure: unknown = null;
    for (const item of items) {
      if (failure !== null) {
        item.reject(failure);
        continue;
      }
      try {
        await this.commitAppends([item]);
        item.resolve();
      } catch (error) {
        failure = refusedOr(item, error);
        this.fail([item], failure);
      }
    }
  }

  /**
   * Rejects failed appends, and with them the appends of their streams still queued: those were
   * made after them and expect the versions they would have written. Written anyway, they could
   * commit after another engine's event that took the failed one's place (a cancel, a takeover)
   * and leave the stream with a run's later step but not its earlier one. Called before the
   * batch's streams leave `streamsInFlight`, so none of those queued appends was sent yet.
   */
  private fail(items: readonly PendingAppend[], failure: unknown): void {
    for (const item of items) item.reject(failure);
    const streams = new Set(items.map((item) => item.streamId));
    const later = this.queue.filter((item) => streams.has(item.streamId));
    if (later.length === 0) return;
    this.queue = this.queue.filter((item) => !streams.has(item.streamId));
    for (const item of later) item.reject(failure);
  }
}

const resolveAll = (batch: readonly PendingAppend[]): void => {
  for (const item of batch) item.resolve();
};

const toAppend = ({ streamId, events, expectedVersion, requires }: PendingAppend): StreamAppend =>
  requires ? { streamId, events, expectedVersion, requires } : { streamId, events, expectedVersion };

/** The commit's appends in order, each `before` ahead of its append (once per stream: equal graphs of two starts). */
function appendsOf(items: readonly PendingAppend[]): StreamAppend[] {
  const appends: StreamAppend[] = [];
  let alongside: Set<string> | undefined;
  for (const item of items) {
    if (item.before && !alongside?.has(item.before.streamId)) {
      (alongside ??= new Set()).add(item.before.streamId);
      appends.push(item.before);
    }
    appends.push(toAppend(item));
  }
  return appends;
}

/** SQLSTATE classes that blame the data written: data exception, integrity constraint, program limit. */
const REFUSED_DATA_CLASSES = ['22', '23', '54'];

const sqlStateOf = (error: unknown): string | undefined => {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
};

/** The error an append gets: an AppendRefusedError when the database refused its data, else the error as it is. */
function refusedOr(item: PendingAppend, error: unknown): unknown {
  const state = sqlStateOf(error);
  if (error instanceof WrongExpectedVersionError || !state || !REFUSED_DATA_CLASSES.includes(state.slice(0, 2)))
    return error;
  return new AppendRefusedError(item.streamId, item.events, state, error);
}
