import type { WorkQueueSpec } from '@weft/contracts';
import { extractTraceContext, withSpan, type Logger } from '@weft/observability';
import type { ConsumeOptions, SendOptions, Subscription, WorkMessage } from '../../bus.js';
import { DEFAULT_RETRY_DELAY_MS, retryDelayMs } from '../../bus-defaults.js';
import { deadLettered } from '../../dead-letter.js';
import { InFlight } from '../../in-flight.js';
import { jsonCopy } from '../../json-payload.js';
import { jsonCopyWithin } from '../../message-size.js';
import { messageContext, outgoingHeaders } from '../../message-headers.js';
import type { InMemoryTimers } from './in-memory-timers.js';

interface WorkItem {
  payload: unknown;
  headers: Record<string, string>;
  deliveryCount: number;
  availableAt: number;
  running: boolean;
}

interface WorkConsumer {
  options: ConsumeOptions;
  handler: (message: WorkMessage<unknown>) => Promise<void>;
  running: number;
  inFlight: InFlight;
  /** Set while the consumer's gate is closed and a pump is promised for when it opens. */
  awaitingGate?: boolean;
}

interface WorkQueue {
  subject: string;
  items: WorkItem[];
  msgIds: Set<string>;
  consumers: WorkConsumer[];
  next: number;
}

/** Work-queue streams in process: each message handled once, redelivered with a delay after a throw. */
export class InMemoryWorkQueues {
  private readonly queues = new Map<string, WorkQueue>();
  private readonly inFlight = new InFlight();

  constructor(
    private readonly timers: InMemoryTimers,
    private readonly logger: Logger,
    private readonly maxMessageBytes: number,
  ) {}

  async enqueue<P>(spec: WorkQueueSpec<P>, payload: P, options: SendOptions & { msgId?: string }): Promise<void> {
    const queue = this.queue(spec);
    await withSpan(
      `publish ${spec.subject}`,
      { 'messaging.system': 'in-memory', 'messaging.destination.name': spec.subject },
      () => {
        // Refused before its msgId is remembered, so a smaller retry with the same id is not dropped.
        const copy = jsonCopyWithin(payload, this.maxMessageBytes, 'message');
        if (options.msgId !== undefined) {
          if (queue.msgIds.has(options.msgId)) return;
          queue.msgIds.add(options.msgId);
        }
        const item = { payload: copy, headers: outgoingHeaders(options), deliveryCount: 0 };
        queue.items.push({ ...item, availableAt: 0, running: false });
      },
      { kind: 'producer' },
    );
    this.pump(queue);
  }

  consume<P>(
    spec: WorkQueueSpec<P>,
    options: ConsumeOptions<P>,
    handler: (message: WorkMessage<P>) => Promise<void>,
  ): Subscription {
    const queue = this.queue(spec);
    const consumer: WorkConsumer = {
      options: options,
      handler: handler as (message: WorkMessage<unknown>) => Promise<void>,
      running: 0,
      inFlight: new InFlight(),
    };
    queue.consumers.push(consumer);
    this.pump(queue);
    return {
      unsubscribe: async () => {
        queue.consumers = queue.consumers.filter((candidate) => candidate !== consumer);
        await consumer.inFlight.settled();
      },
    };
  }

  async settled(): Promise<void> {
    await this.inFlight.settled();
  }

  private queue(spec: WorkQueueSpec<unknown>): WorkQueue {
    const existing = this.queues.get(spec.stream);
    if (existing) return existing;
    const created: WorkQueue = { subject: spec.subject, items: [], msgIds: new Set(), consumers: [], next: 0 };
    this.queues.set(spec.stream, created);
    return created;
  }

  /** Hands every available message to a consumer with a free slot, oldest first. */
  private pump(queue: WorkQueue): void {
    if (this.timers.stopped) return;
    const now = Date.now();
    let nextAvailableAt = Infinity;
    for (const item of queue.items) {
      if (item.running) continue;
      if (item.availableAt > now) {
        nextAvailableAt = Math.min(nextAvailableAt, item.availableAt);
        continue;
      }
      const taken = this.freeConsumer(queue);
      if (!taken) return;
      const { consumer, releaseSlot } = taken;
      void this.inFlight.track(consumer.inFlight.track(this.run(queue, consumer, item, releaseSlot)));
    }
    if (nextAvailableAt !== Infinity) this.timers.after(nextAvailableAt - now, () => this.pump(queue));
  }

  /** A consumer with a free handler slot and an open gate; a closed gate pumps again once it opens. */
  private freeConsumer(queue: WorkQueue): { consumer: WorkConsumer; releaseSlot: () => void } | undefined {
    for (let offset = 0; offset < queue.consumers.length; offset += 1) {
      const consumer = queue.consumers[(queue.next + offset) % queue.consumers.length];
      if (!consumer || consumer.running >= Math.max(1, consumer.options.concurrency ?? 1)) continue;
      const gate = consumer.options.gate;
      const releaseSlot = gate ? gate.tryTake() : () => undefined;
      if (!releaseSlot) {
        if (gate && !consumer.awaitingGate) {
          consumer.awaitingGate = true;
          void gate.whenFree().then(() => {
            consumer.awaitingGate = false;
            this.pump(queue);
          });
        }
        continue;
      }
      queue.next = (queue.next + offset + 1) % queue.consumers.length;
      return { consumer, releaseSlot };
    }
    return undefined;
  }

  private async run(queue: WorkQueue, consumer: WorkConsumer, item: WorkItem, releaseSlot: () => void): Promise<void> {
    item.running = true;
    item.deliveryCount += 1;
    consumer.running += 1;
    const message = (): WorkMessage<unknown> => ({
      payload: jsonCopy(item.payload),
      context: messageContext({ ...item.headers }),
      deliveryCount: item.deliveryCount,
    });
    try {
      await Promise.resolve();
      await withSpan(
        `consume ${queue.subject}`,
        {
          'messaging.system': 'in-memory',
          'messaging.destination.name': queue.subject,
          'messaging.delivery_count': item.deliveryCount,
        },
        () => consumer.handler(message()),
        { kind: 'consumer', parent: extractTraceContext(item.headers) },
      );
      queue.items = queue.items.filter((candidate) => candidate !== item);
    } catch (error) {
      const { deadLetter, retryDelayMs: baseDelay } = consumer.options;
      const lastAttempt = deadLetter !== undefined && item.deliveryCount >= deadLetter.afterDeliveries;
      this.logger.error(
        { err: error, subject: queue.subject, deliveryCount: item.deliveryCount, lastAttempt },
        'work message failed',
      );
      if (lastAttempt && (await deadLettered(deadLetter, message(), error, this.logger))) {
        queue.items = queue.items.filter((candidate) => candidate !== item);
      } else {
        item.availableAt = Date.now() + retryDelayMs(baseDelay ?? DEFAULT_RETRY_DELAY_MS, item.deliveryCount);
      }
    } finally {
      item.running = false;
      consumer.running -= 1;
      releaseSlot();
      this.pump(queue);
    }
  }
}
