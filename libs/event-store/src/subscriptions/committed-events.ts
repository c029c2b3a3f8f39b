import type { StoredEvent } from '../event-store.js';

/**
 * Bounds of what waits for the reader: past them (a reader that cannot publish, one very large
 * append) the events are dropped and read from the database instead, one batch at a time, as
 * before. The bytes are the appends' JSON as sent to the database.
 */
export const COMMITTED_EVENTS_MAX_WAITING = 2_000;
export const COMMITTED_EVENTS_MAX_WAITING_BYTES = 16 * 1024 * 1024;

/**
 * How long a gap before what waits may wait for an append that could fill it (one whose answer
 * is late: a slow or hung connection) before the reader reads the database instead.
 */
export const COMMITTED_EVENTS_MAX_GAP_WAIT_MS = 200;

/** One append's events, in position order, with what it cost and when it arrived. */
interface WaitingBatch {
  events: readonly StoredEvent[];
  bytes: number;
  /** Appends whose ticket is below this were started before this batch was handed over. */
  stamp: number;
}

/**
 * The events this process's store just committed, in position order, for the one catch-up loop
 * that reads every event (the outbox relay): it takes them from here instead of reading them back
 * from the database, which cost the database the rows and this process their parsing, and kept
 * every event alive long enough to be copied twice by the garbage collector.
 *
 * Taking is safe only when nothing can be missed: events are handed over only as a run of
 * positions that starts right after what the reader has handled (`after + 1`, no integer left
 * between) and has no gap inside, since appends are serialized by the append lock. Two commits
 * in flight can be answered in either order, so a gap before what waits waits for the appends
 * that were in flight when the events after it arrived (an append started later commits later:
 * it cannot fill the gap), for at most COMMITTED_EVENTS_MAX_GAP_WAIT_MS. Anything else (another
 * process's append, an append whose outcome is unknown, a gap left by a rolled back one, dropped
 * events) requests a read, and the reader reads the database as before.
 */
export class CommittedEvents {
  /** Batches in position order, none overlapping. */
  private waiting: WaitingBatch[] = [];
  private waitingEvents = 0;
  private waitingBytes = 0;
  /** The reader events are kept for (one at a time: the loop that leads). */
  private reader: object | undefined;
  private readRequested = true;
  /** Tickets of this process's appends sent and not yet handed over (committed, or failed: a read requested). */
  private readonly inFlight = new Set<number>();
  private nextTicket = 0;
  /** When `take` first found the gap it is waiting on, and the position it is after. */
  private gapSince: number | undefined;
  private gapAfter: number | undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

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

  /** An append of this process's store is sent; its ticket goes to `appendSettled` once its outcome is handed over. */
  appendStarted(): number {
    const ticket = this.nextTicket++;
    this.inFlight.add(ticket);
    return ticket;
  }

  appendSettled(ticket: number): void {
    this.inFlight.delete(ticket);
  }

  /** This process committed `events` (in position order); `bytes`: their size as sent, when known. */
  committed(events: readonly StoredEvent[], bytes = 0): void {
    if (!this.reader || events.length === 0) return;
    if (
      this.waitingEvents + events.length > COMMITTED_EVENTS_MAX_WAITING ||
      this.waitingBytes + bytes > COMMITTED_EVENTS_MAX_WAITING_BYTES
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
    // A later commit's answer can come first: a batch goes in at its place by position. One that
    // overlaps what waits is not trusted.
    const first = events[0]!.position;
    let at = this.waiting.length;
    while (at > 0 && this.waiting[at - 1]!.events[0]!.position > first) at -= 1;
    const before = this.waiting[at - 1];
    const after = this.waiting[at];
    if (
      (before && before.events[before.events.length - 1]!.position >= first) ||
      (after && after.events[0]!.position <= events[events.length - 1]!.position)
    ) {
      this.unknown();
      return;
    }
    this.waiting.splice(at, 0, { events, bytes, stamp: this.nextTicket });
    this.waitingEvents += events.length;
    this.waitingBytes += bytes;
  }

  /** Something was or may have been committed that is not here: the reader must read the database. */
  unknown(): void {
    this.clear();
    this.readRequested = true;
  }

  private clear(): void {
    this.waiting = [];
    this.waitingEvents = 0;
    this.waitingBytes = 0;
    this.gapSince = undefined;
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
   * waiting is not `after + 1`. Such a gap waits while an append that was in flight when the
   * events after it arrived still is (its events, or a read request if it fails, come with its
   * answer), up to COMMITTED_EVENTS_MAX_GAP_WAIT_MS; otherwise it is another process's or a lost
   * append's: a read is requested and what waits is dropped.
   */
  take(after: number, limit: number): StoredEvent[] {
    this.dropUpTo(after);
    const head = this.waiting[0];
    if (!head) return [];
    if (head.events[0]!.position !== after + 1) {
      if (!this.mayFill(head.stamp)) {
        this.unknown();
        return [];
      }
      // Timed from when this gap (the one after `after`) was first seen, not an earlier one's.
      if (this.gapSince === undefined || this.gapAfter !== after) {
        this.gapSince = this.now();
        this.gapAfter = after;
      }
      if (this.now() - this.gapSince > COMMITTED_EVENTS_MAX_GAP_WAIT_MS) this.unknown();
      return [];
    }
    this.gapSince = undefined;
    const taken: StoredEvent[] = [];
    let last = after;
    while (this.waiting.length > 0 && taken.length < limit) {
      const batch = this.waiting[0]!;
      let index = 0;
      while (index < batch.events.length && taken.length < limit && batch.events[index]!.position === last + 1) {
        taken.push(batch.events[index]!);
        last += 1;
        index += 1;
      }
      if (index === batch.events.length) this.removeHead();
      else {
        if (index > 0) this.keepFrom(index);
        break;
      }
    }
    return taken;
  }

  /** Whether an append started before `stamp` is still in flight (it may hold the missing positions). */
  private mayFill(stamp: number): boolean {
    for (const ticket of this.inFlight) if (ticket < stamp) return true;
    return false;
  }

  /** Drops what the reader already has (it read the database meanwhile). */
  private dropUpTo(position: number): void {
    while (this.waiting.length > 0) {
      const events = this.waiting[0]!.events;
      if (events[events.length - 1]!.position <= position) {
        this.removeHead();
        continue;
      }
      let index = 0;
      while (events[index]!.position <= position) index += 1;
      if (index > 0) this.keepFrom(index);
      return;
    }
  }

  private removeHead(): void {
    const batch = this.waiting.shift()!;
    this.waitingEvents -= batch.events.length;
    this.waitingBytes -= batch.bytes;
  }

  /** Keeps the head batch from its event `index` on; its bytes go with the events handed over, pro rata. */
  private keepFrom(index: number): void {
    const batch = this.waiting[0]!;
    const freed = Math.floor((batch.bytes * index) / batch.events.length);
    this.waitingEvents -= index;
    this.waitingBytes -= freed;
    this.waiting[0] = { events: batch.events.slice(index), bytes: batch.bytes - freed, stamp: batch.stamp };
  }
}
