import type { StoredEvent } from '../event-store.js';
import type { PostgresEventStore } from '../adapters/postgres/postgres-event-store.js';
import type { CommittedEvents } from './committed-events.js';

export interface CatchUpLoopConfig {
  store: PostgresEventStore;
  eventTypes?: readonly string[];
  batchSize: number;
  pollMs: number;
  /**
   * Take the events this process committed from here instead of reading them back (only without
   * `eventTypes`: the reader of every event, the outbox relay); the database is read when they
   * cannot be vouched for, and at every `pollMs` without an append.
   */
  committed?: CommittedEvents;
  /** Read events with their data and metadata as JSON text, parsed when first used (`ReadAllRangeOptions.jsonText`). */
  jsonText?: boolean;
  /** Wait after a failure before reloading the checkpoint and retrying; default `pollMs`. */
  retryMs?: number;
  /** Position already handled; read at start and again after every failure. */
  loadCheckpoint(): Promise<number>;
  /**
   * Handles `events` (every matching event in (checkpoint, reached]) and stores `reached` as the
   * checkpoint. Throwing makes the loop wait `pollMs`, reload the checkpoint and retry. `taken`:
   * the events were taken from `committed` (this process's appends, not read back).
   */
  handleBatch(events: StoredEvent[], reached: number, taken: boolean): Promise<void>;
  onError?(error: unknown): void;
}

/**
 * The loop behind subscriptions, async projections and the outbox relay: read a batch after the
 * checkpoint, hand it over, repeat; when caught up, sleep until an append or `pollMs`.
 */
export class CatchUpLoop {
  private reached = 0;
  private readonly stopping = new AbortController();
  private readonly positionWaiters: { position: number; resolve: () => void }[] = [];
  private running: Promise<void> | undefined;

  constructor(private readonly config: CatchUpLoopConfig) {}

  /** Position handled so far. */
  get position(): number {
    return this.reached;
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }

  waitForPosition(position: number): Promise<void> {
    if (this.reached >= position) return Promise.resolve();
    return new Promise((resolve) => this.positionWaiters.push({ position, resolve }));
  }

  private async run(): Promise<void> {
    const { store, batchSize, pollMs, committed } = this.config;
    let loaded = false;
    while (!this.stopping.signal.aborted) {
      try {
        if (!loaded) {
          this.advance(await this.config.loadCheckpoint());
          loaded = true;
          // Kept only while this loop reads (not while a standby relay waits for its lock).
          committed?.attach(this);
        }
        const seen = store.appendSignal.current;
        if (this.config.eventTypes === undefined) {
          if (await this.readEverything()) continue;
          await store.appendSignal.wait(seen, pollMs, this.stopping.signal);
          // The poll interval passed without a wake-up: read the database, as without `committed`.
          if (store.appendSignal.current === seen) committed?.requestRead();
          continue;
        }
        const head = await store.headPosition();
        if (head > this.reached) {
          const events = await store.readAll({
            fromPosition: this.reached,
            toPosition: head,
            limit: batchSize,
            eventTypes: this.config.eventTypes,
          });
          // A short batch holds every matching event up to head, so the checkpoint can skip to it.
          const reached = events.length === batchSize ? events[events.length - 1]!.position : head;
          await this.config.handleBatch(events, reached, false);
          this.advance(reached);
          if (reached < head) continue;
        }
        await store.appendSignal.wait(seen, pollMs, this.stopping.signal);
      } catch (error) {
        this.config.onError?.(error);
        loaded = false;
        committed?.detach(this);
        await sleep(this.config.retryMs ?? pollMs, this.stopping.signal);
      }
    }
    committed?.detach(this);
  }

  /**
   * Without a type filter no head is needed: appends are serialized (the store's append lock is
   * held until commit), so the events after the checkpoint that a read sees are all that were
   * committed below the last of them. One statement per wake-up instead of two. True when a full
   * batch came back (more may follow at once). The events this process committed come from
   * `committed` when it holds the next ones; then true, to look again at once.
   */
  private async readEverything(): Promise<boolean> {
    const { store, batchSize, committed } = this.config;
    if (committed) {
      const taken = committed.take(this.reached, batchSize);
      if (taken.length > 0) {
        const reached = taken[taken.length - 1]!.position;
        await this.config.handleBatch(taken, reached, true);
        this.advance(reached);
        return true;
      }
      if (!committed.takeReadRequest()) return false;
    }
    const events = await store.readAll({
      fromPosition: this.reached,
      limit: batchSize,
      jsonText: this.config.jsonText,
    });
    if (events.length === 0) return false;
    const reached = events[events.length - 1]!.position;
    await this.config.handleBatch(events, reached, false);
    this.advance(reached);
    const full = events.length === batchSize;
    // More may be there: the next turn reads again (taking what is in hand first).
    if (full) committed?.requestRead();
    return full;
  }

  private advance(position: number): void {
    this.reached = position;
    for (let i = this.positionWaiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.positionWaiters[i]!;
      if (waiter.position <= position) {
        this.positionWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}

const sleep = (ms: number, interrupt: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (interrupt.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    interrupt.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
