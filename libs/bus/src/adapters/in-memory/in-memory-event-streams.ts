import { extractTraceContext, ROOT_CONTEXT, withSpan, type Logger } from '@weft/observability';
import type { EventRetention, EventStreamSpec, PublishedEvent, PublishOptions, Subscription } from '../../bus.js';
import { DEFAULT_RETRY_DELAY_MS, retryDelayMs } from '../../bus-defaults.js';
import { outgoingHeaders } from '../../message-headers.js';
import { subjectMatcher } from '../../subject-pattern.js';
import type { InMemoryTimers } from './in-memory-timers.js';

/**
 * A stored event keeps its payload as JSON bytes: encoded once when published (what JetStream
 * stores), decoded for each delivery, so no subscriber sees another's changes and an event no one
 * reads is never decoded. Bytes, not a string: a Buffer's contents live outside the JavaScript
 * heap, so the thousands of retained events are not copied by every young-generation collection
 * (under load they outlived two and were promoted: most of the old generation's growth).
 */
interface StoredEvent extends Omit<PublishedEvent, 'payload'> {
  body: Buffer | undefined;
}

interface EventStream {
  name: string;
  wildcard: string;
  matches: (subject: string) => boolean;
  /**
   * The newest `maxMessages` events are `events[head..]`; `events[head]` is the one at index
   * `base`. Discarded slots are emptied at once but leave the array only a window's worth at a
   * time: one splice per published event would move the whole array every time.
   */
  events: (StoredEvent | undefined)[];
  head: number;
  base: number;
  /** Dedupe window: the msgIds of the retained events, oldest first (`msgIdOrder[head..]`). */
  msgIds: Set<string>;
  msgIdOrder: string[];
}

/** Like a JetStream stream with max_msgs and discard=old: an embedded process must not grow without bound. */
export const IN_MEMORY_STREAM_MAX_MESSAGES = 10_000;

const endOf = (stream: EventStream): number => stream.base + stream.events.length - stream.head;

interface Durable {
  stream: EventStream;
  filter: string;
  matches: (subject: string) => boolean;
  /** Index of the next stored event this durable has not acked. */
  cursor: number;
  deliveryCount: number;
  subscribers: Array<(event: PublishedEvent) => Promise<void>>;
  next: number;
  delivering?: Promise<void>;
  retryScheduled: boolean;
}

/** JetStream-like event streams in process: durable cursors, in-order delivery, dedupe by msgId. */
export class InMemoryEventStreams {
  private readonly streams = new Map<string, EventStream>();
  private readonly durables = new Map<string, Durable>();

  constructor(
    private readonly timers: InMemoryTimers,
    private readonly logger: Logger,
    private readonly maxMessages = IN_MEMORY_STREAM_MAX_MESSAGES,
    private readonly retention: EventRetention = 'limits',
  ) {}

  /**
   * Whether an event published on `subject` now would be kept: always, unless retention is by
   * interest (or no stream takes the subject: its publish then says so).
   */
  hasInterest(subject: string): boolean {
    if (this.retention === 'limits') return true;
    for (const stream of this.streams.values()) if (stream.matches(subject)) return this.interestIn(stream, subject);
    return true;
  }

  private interestIn(stream: EventStream, subject: string): boolean {
    if (this.retention === 'limits') return true;
    for (const durable of this.durables.values())
      if (durable.stream === stream && durable.matches(subject)) return true;
    return false;
  }

  ensure(spec: EventStreamSpec): void {
    if (!this.streams.has(spec.stream)) {
      this.streams.set(spec.stream, {
        name: spec.stream,
        wildcard: spec.wildcard,
        matches: subjectMatcher(spec.wildcard),
        events: [],
        head: 0,
        base: 0,
        msgIds: new Set(),
        msgIdOrder: [],
      });
    }
  }

  async publish(subject: string, payload: unknown, options: PublishOptions): Promise<void> {
    const stream = this.streamFor(subject);
    // Interest retention, as JetStream: accepted, and gone at once when no durable takes it.
    if (!this.interestIn(stream, subject)) return;
    /** Where this publish stored its event; undefined for a duplicate, which stores nothing. */
    let storedAt: number | undefined;
    await withSpan(
      `publish ${subject}`,
      { 'messaging.system': 'in-memory', 'messaging.destination.name': subject },
      () => {
        // Same answer as JetStream for a duplicate Nats-Msg-Id: accepted, stored once.
        if (stream.msgIds.has(options.msgId)) return;
        stream.msgIds.add(options.msgId);
        stream.msgIdOrder.push(options.msgId);
        const sequence = endOf(stream) + 1;
        // JSON.stringify answers undefined for undefined (a message without a body).
        const json: string | undefined = options.json ?? JSON.stringify(payload);
        const body = json === undefined ? undefined : Buffer.from(json);
        storedAt = endOf(stream);
        stream.events.push({ subject, body, headers: outgoingHeaders(options), sequence });
        this.discardOld(stream);
      },
      // Outside a trace (the outbox relay's loop) a new one would carry only a random id.
      { kind: 'producer', untracedWithoutTrace: true },
    );
    for (const durable of this.durables.values()) {
      if (durable.stream !== stream) continue;
      // A durable idle at this publish's event, still the newest, which its filter does not take,
      // only moves past it: embedded, every run's events pass a durable that wants process events
      // alone. Anything else (a duplicate stored nothing; a later publish stored after it while
      // the span's callbacks ran) gets a delivery round, which looks at every event itself.
      const idle = !durable.delivering && !durable.retryScheduled;
      const atThisEvent = storedAt !== undefined && durable.cursor === storedAt && storedAt === endOf(stream) - 1;
      if (idle && atThisEvent && !durable.matches(subject)) durable.cursor += 1;
      else this.pump(durable);
    }
  }

  subscribe(filter: string, durableName: string, handler: (event: PublishedEvent) => Promise<void>): Subscription {
    const stream = this.streamFor(filter);
    const key = `${stream.name}:${durableName}`;
    const durable: Durable = this.durables.get(key) ?? {
      stream,
      filter,
      matches: subjectMatcher(filter),
      cursor: 0,
      deliveryCount: 0,
      subscribers: [],
      next: 0,
      retryScheduled: false,
    };
    this.durables.set(key, durable);
    durable.subscribers.push(handler);
    this.pump(durable);
    return {
      unsubscribe: async () => {
        durable.subscribers = durable.subscribers.filter((candidate) => candidate !== handler);
        await durable.delivering;
      },
    };
  }

  async settled(): Promise<void> {
    const deliveries = [...this.durables.values()].flatMap((durable) =>
      durable.delivering ? [durable.delivering] : [],
    );
    await Promise.allSettled(deliveries);
  }

  private discardOld(stream: EventStream): void {
    const excess = stream.events.length - stream.head - this.maxMessages;
    if (excess <= 0) return;
    for (let index = stream.head; index < stream.head + excess; index++) {
      stream.events[index] = undefined;
      stream.msgIds.delete(stream.msgIdOrder[index]!);
    }
    stream.head += excess;
    stream.base += excess;
    if (stream.head < this.maxMessages) return;
    stream.events.splice(0, stream.head);
    stream.msgIdOrder.splice(0, stream.head);
    stream.head = 0;
  }

  private streamFor(subject: string): EventStream {
    for (const stream of this.streams.values()) if (stream.matches(subject)) return stream;
    throw new Error(`no stream stores ${subject}; call ensureEventStream first`);
  }

  private pump(durable: Durable): void {
    if (durable.delivering || durable.retryScheduled || this.timers.stopped) return;
    durable.delivering = this.deliver(durable).finally(() => {
      durable.delivering = undefined;
      // An event published while the loop was finishing still needs delivering.
      const behind = durable.cursor < endOf(durable.stream);
      if (behind && durable.subscribers.length > 0) this.pump(durable);
    });
  }

  /** Delivers events one at a time, in order, each to one subscriber of the durable. */
  private async deliver(durable: Durable): Promise<void> {
    await Promise.resolve();
    while (durable.cursor < endOf(durable.stream) && durable.subscribers.length > 0) {
      // Events discarded by the retention limit are gone, as on JetStream.
      durable.cursor = Math.max(durable.cursor, durable.stream.base);
      const event = durable.stream.events[durable.stream.head + durable.cursor - durable.stream.base];
      if (!event || !durable.matches(event.subject)) {
        durable.cursor += 1;
        continue;
      }
      const subscriber = durable.subscribers[durable.next % durable.subscribers.length];
      durable.next += 1;
      durable.deliveryCount += 1;
      try {
        await withSpan(
          `receive ${event.subject}`,
          { 'messaging.system': 'in-memory', 'messaging.destination.name': event.subject },
          () =>
            subscriber!({
              subject: event.subject,
              payload: event.body === undefined ? undefined : JSON.parse(event.body.toString()),
              headers: { ...event.headers },
              sequence: event.sequence,
            }),
          // An event published outside a trace (the relay's) must not join the trace of whatever
          // publish started this delivery loop: without a traceparent, its handler starts its own.
          { kind: 'consumer', parent: extractTraceContext(event.headers, ROOT_CONTEXT) },
        );
        durable.cursor += 1;
        durable.deliveryCount = 0;
      } catch (error) {
        this.logger.error({ err: error, subject: event.subject }, 'event handler failed; redelivering');
        durable.retryScheduled = true;
        this.timers.after(retryDelayMs(DEFAULT_RETRY_DELAY_MS, durable.deliveryCount), () => {
          durable.retryScheduled = false;
          this.pump(durable);
        });
        return;
      }
    }
  }
}
