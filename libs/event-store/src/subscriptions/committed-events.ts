import type { StoredEvent } from '../event-store.js';

/**
 * Bounds of what waits for the reader: past them (a reader that cannot publish, one very large
 * append) the events are dropped and read from the database instead, one batch at a time, as
 * before. The bytes are the appends' JSON as sent to the database.
 */
export const COMMITTED_EVENTS_MAX_WAITING = 2_000;
export const COMMITTED_EVENTS_MAX_WAITING_BYTES = 16 * 1024 * 1024;

/**
 * The events this process's store just committed, in position order, for the one catch-up loop
 * that reads every event (the outbox relay): it takes them from here instead of reading them back
 * from the database, which cost the database the rows and this process their parsing, and kept
 * every event alive long enough to be copied twice by the garbage collector.
 *
 * Taking is safe only when nothing can be missed: events are handed over only as a run of
 * positions that starts right after what the reader has handled (`after + 1`, no integer left
 * between) and has no gap inside, since appends are serialized by the append lock. A gap waits
 * while this process has appends in flight (their answers can come in either order); anything
 * else (another process's append, an append whose outcome is unknown, a gap left by a rolled
 * back one, dropped events) requests a read, and the reader reads the database as before.
 */
export class CommittedEvents {
  private waiting: StoredEvent[] = [];
  private waitingBytes = 0;
  /** The reader events are kept for (one at a time: the loop that leads). */
  private reader: object | undefined;
  private readRequested = true;
  /** Appends of this process sent and not yet handed over (committed, or failed: a read requested). */
  private appendsInFlight = 0;

  /** Called by the reader: from now on committed events are kept for it, until it detaches. */
  attach(reader: object): void {
    this.reader = reader;
    this.clear();
    this.readRequested = true;
  }

  /** Only the attached reader detaches (a standby failing to lead must not stop the leader's events). */
  detach(reader: object): void {
    if (this.reader !== reader) return;
    this.reader = undefined;
    this.clear();
  }

  /** This process committed `events` (in position order); `bytes`: their size as sent, when known. */
  committed(events: readonly StoredEvent[], bytes = 0): void {
    if (!this.reader || events.length === 0) return;
    this.waitingBytes += bytes;
    if (
      this.waiting.length + events.length > COMMITTED_EVENTS_MAX_WAITING ||
      this.waitingBytes > COMMITTED_EVENTS_MAX_WAITING_BYTES
    ) {
      this.unknown();
      return;
    }
    // Batch order is position order (the insert assigns them so); anything else is not trusted.
    for (let index = 1; index < events.length; index++) {
      if (events[index]!.position <= events[index - 1]!.position) {
        this.unknown();
        return;
      }
    }
    // Two commits in flight end on two connections, so the later one's answer can come first:
    // a batch goes in at its place by position. One that overlaps what waits is not trusted.
    const first = events[0]!.position;
    let at = this.waiting.length;
    while (at > 0 && this.waiting[at - 1]!.position > first) at -= 1;
    const before = this.waiting[at - 1];
    const after = this.waiting[at];
    if ((before && before.position >= first) || (after && after.position <= events[events.length - 1]!.position)) {
      this.unknown();
      return;
    }
    if (after) this.waiting.splice(at, 0, ...events);
    else for (const event of events) this.waiting.push(event);
  }

  /** An append of this process's store was sent; `appendSettled` once its outcome is handed over. */
  appendStarted(): void {
    this.appendsInFlight += 1;
  }

  appendSettled(): void {
    this.appendsInFlight -= 1;
  }

  /** Something was or may have been committed that is not here: the reader must read the database. */
  unknown(): void {
    this.clear();
    this.readRequested = true;
  }

  private clear(): void {
    this.waiting = [];
    this.waitingBytes = 0;
  }

  /** The reader must read the database (woken by another process, or it lost its place). */
  requestRead(): void {
    this.readRequested = true;
  }

  /** True (once per request) when the reader must read the database to miss nothing. */
  takeReadRequest(): boolean {
    const requested = this.readRequested;
    this.readRequested = false;
    return requested;
  }

  /**
   * Up to `limit` events right after position `after`, without a gap; empty when the next one
   * waiting is not `after + 1`. Such a gap waits while an append of this process is in flight
   * (its events, or a read request if it fails, come with its answer); with none in flight it is
   * another process's or a lost append's: a read is requested and what waits is dropped.
   */
  take(after: number, limit: number): StoredEvent[] {
    let start = 0;
    while (start < this.waiting.length && this.waiting[start]!.position <= after) start += 1;
    if (start === this.waiting.length) {
      this.clear();
      return [];
    }
    if (this.waiting[start]!.position !== after + 1) {
      if (this.appendsInFlight === 0) this.unknown();
      else if (start > 0) this.waiting = this.waiting.slice(start);
      return [];
    }
    let end = start + 1;
    while (
      end < this.waiting.length &&
      end - start < limit &&
      this.waiting[end]!.position === this.waiting[end - 1]!.position + 1
    )
      end += 1;
    const taken = this.waiting.slice(start, end);
    this.waiting = this.waiting.slice(end);
    if (this.waiting.length === 0) this.waitingBytes = 0;
    return taken;
  }
}
