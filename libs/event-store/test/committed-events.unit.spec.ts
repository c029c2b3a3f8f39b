import {
  COMMITTED_EVENTS_MAX_GAP_WAIT_MS,
  COMMITTED_EVENTS_MAX_WAITING,
  COMMITTED_EVENTS_MAX_WAITING_BYTES,
  CommittedEvents,
} from '../src/subscriptions/committed-events.js';
import type { StoredEvent } from '../src/index.js';

const at = (...positions: number[]): StoredEvent[] =>
  positions.map((position) => ({
    eventId: `e${position}`,
    streamId: 's',
    streamVersion: position,
    position,
    type: 'T',
    schemaVersion: 1,
    data: { position },
    metadata: {},
    recordedAt: new Date(0),
  }));
const positionsOf = (events: StoredEvent[]): number[] => events.map((event) => event.position);

const reader = {};
const attached = (): CommittedEvents => {
  const committed = new CommittedEvents();
  committed.attach(reader);
  // A reader reads once after attaching: what was committed before it attached is not here.
  expect(committed.takeReadRequest()).toBe(true);
  expect(committed.takeReadRequest()).toBe(false);
  return committed;
};

describe('committed events (the outbox relay takes its own process appends without reading them back)', () => {
  test('hands over the run of positions right after what the reader handled, within the limit', () => {
    const committed = attached();
    committed.committed(at(5, 6, 7));
    committed.committed(at(8, 9));
    expect(positionsOf(committed.take(4, 3))).toEqual([5, 6, 7]);
    expect(positionsOf(committed.take(7, 100))).toEqual([8, 9]);
    expect(committed.take(9, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(false);
  });

  test('skips what the reader already has (it read the database meanwhile)', () => {
    const committed = attached();
    committed.committed(at(5, 6, 7, 8));
    expect(positionsOf(committed.take(6, 100))).toEqual([7, 8]);
    committed.committed(at(9));
    expect(committed.take(12, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(false);
  });

  test('a position missing before the first one waiting (another process, a rolled-back append) means read', () => {
    const committed = attached();
    committed.committed(at(7, 8));
    expect(committed.take(5, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(true);
    // What waited was dropped: the read brings it.
    expect(committed.take(5, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(false);
  });

  test("answers of two commits in flight may come in either order: the later one's events wait at their place", () => {
    const committed = attached();
    const a = committed.appendStarted(); // positions 2-3
    const b = committed.appendStarted(); // positions 4-5, answered first
    committed.appendSettled(b);
    committed.committed(at(4, 5));
    expect(committed.take(1, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(false);
    committed.appendSettled(a);
    committed.committed(at(2, 3));
    expect(positionsOf(committed.take(1, 100))).toEqual([2, 3, 4, 5]);
    expect(committed.takeReadRequest()).toBe(false);
  });

  test('a gap waits only for appends started before the events after it arrived', () => {
    const committed = attached();
    const a = committed.appendStarted();
    const b = committed.appendStarted();
    committed.appendSettled(b);
    committed.committed(at(6, 7));
    expect(committed.take(4, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(false);
    // The other append failed (the store asks for a read). Appends sent since cannot fill the
    // gap, however many are in flight: the gap is read.
    committed.appendSettled(a);
    committed.requestRead();
    const d = committed.appendStarted();
    expect(committed.take(4, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(true);
    committed.appendSettled(d);
    // Nothing in flight that started before position 9 arrived: the gap before it is read.
    const c = committed.appendStarted();
    committed.appendSettled(c);
    committed.committed(at(9));
    committed.appendStarted();
    expect(committed.take(7, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(true);
  });

  test('a gap waits for a late answer at most COMMITTED_EVENTS_MAX_GAP_WAIT_MS', () => {
    let now = 0;
    const committed = new CommittedEvents(() => now);
    committed.attach(reader);
    committed.takeReadRequest();
    committed.appendStarted(); // never answers (a hung connection)
    committed.committed(at(3));
    expect(committed.take(1, 100)).toEqual([]);
    now += COMMITTED_EVENTS_MAX_GAP_WAIT_MS;
    expect(committed.take(1, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(false);
    now += 1;
    expect(committed.take(1, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(true);
  });

  test("a new gap is timed from when it is seen, not from an earlier gap's start", () => {
    let now = 0;
    const committed = new CommittedEvents(() => now);
    committed.attach(reader);
    committed.takeReadRequest();
    const a = committed.appendStarted();
    committed.committed(at(11));
    expect(committed.take(9, 100)).toEqual([]); // the gap at 10 waits for a
    // The reader read 10 and 11 from the database meanwhile; a's answer comes after.
    committed.requestRead();
    expect(committed.takeReadRequest()).toBe(true);
    committed.appendSettled(a);
    committed.committed(at(10));
    expect(committed.take(11, 100)).toEqual([]);
    now = 1000;
    const b = committed.appendStarted(); // will hold 12
    const d = committed.appendStarted();
    committed.appendSettled(d);
    committed.committed(at(13));
    expect(committed.take(11, 100)).toEqual([]); // a gap seen just now: it waits for b
    expect(committed.takeReadRequest()).toBe(false);
    committed.appendSettled(b);
    committed.committed(at(12));
    expect(positionsOf(committed.take(11, 100))).toEqual([12, 13]);
  });

  test('the bytes of events handed over stop counting against the bound', () => {
    const committed = attached();
    const half = COMMITTED_EVENTS_MAX_WAITING_BYTES / 2;
    committed.committed(at(1, 2), half);
    expect(positionsOf(committed.take(0, 1))).toEqual([1]);
    committed.committed(at(3), half);
    expect(committed.takeReadRequest()).toBe(false);
    expect(positionsOf(committed.take(1, 100))).toEqual([2, 3]);
  });

  test('a batch lower than what waits goes in before it; one that overlaps is not trusted', () => {
    const committed = attached();
    committed.committed(at(5, 6));
    committed.committed(at(1, 2));
    expect(positionsOf(committed.take(0, 100))).toEqual([1, 2]);
    expect(committed.take(2, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(true);

    committed.committed(at(10, 11, 12));
    committed.committed(at(12, 13));
    expect(committed.takeReadRequest()).toBe(true);
    expect(committed.take(9, 100)).toEqual([]);
    committed.committed(at(20, 21));
    committed.committed(at(19, 20));
    expect(committed.takeReadRequest()).toBe(true);
    expect(committed.take(18, 100)).toEqual([]);
  });

  test('a gap inside what waits ends the run there; the rest needs a read', () => {
    const committed = attached();
    committed.committed(at(1, 2));
    committed.committed(at(5, 6));
    expect(positionsOf(committed.take(0, 100))).toEqual([1, 2]);
    expect(committed.take(2, 100)).toEqual([]);
    expect(committed.takeReadRequest()).toBe(true);
  });

  test('events out of position order are not trusted', () => {
    const committed = attached();
    committed.committed(at(3, 2));
    expect(committed.takeReadRequest()).toBe(true);
    expect(committed.take(1, 100)).toEqual([]);
  });

  test('keeps nothing while no reader is attached, and nothing past its bounds (count, bytes)', () => {
    const committed = new CommittedEvents();
    committed.committed(at(1, 2, 3));
    committed.attach(reader);
    expect(committed.take(0, 100)).toEqual([]);

    const positions = Array.from({ length: COMMITTED_EVENTS_MAX_WAITING + 1 }, (_, i) => i + 1);
    committed.takeReadRequest();
    committed.committed(at(...positions));
    expect(committed.takeReadRequest()).toBe(true);
    expect(committed.take(0, 100)).toEqual([]);

    committed.committed(at(1, 2), COMMITTED_EVENTS_MAX_WAITING_BYTES / 2);
    committed.committed(at(3), COMMITTED_EVENTS_MAX_WAITING_BYTES / 2 + 1);
    expect(committed.takeReadRequest()).toBe(true);
    expect(committed.take(0, 100)).toEqual([]);

    committed.committed(at(1, 2));
    committed.detach(reader);
    committed.attach(reader);
    expect(committed.take(0, 100)).toEqual([]);
  });

  test('only the reader that attached detaches it (a standby failing to lead leaves the leader its events)', () => {
    const committed = attached();
    committed.committed(at(1, 2));
    committed.detach({});
    expect(positionsOf(committed.take(0, 100))).toEqual([1, 2]);
    committed.detach(reader);
    committed.committed(at(3));
    expect(committed.take(2, 100)).toEqual([]);
  });

  test('an outcome not known (a failed commit, a wake-up from another process) asks for a read', () => {
    const committed = attached();
    committed.committed(at(1));
    committed.requestRead();
    expect(positionsOf(committed.take(0, 100))).toEqual([1]);
    expect(committed.takeReadRequest()).toBe(true);
  });
});
