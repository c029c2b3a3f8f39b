import type { RequestSpec, WorkQueueSpec } from '@weft/contracts';
import { createLogger, type Logger } from '@weft/observability';
import type {
  Bus,
  ConsumeOptions,
  EventStreamSpec,
  MessageContext,
  PublishedEvent,
  SendOptions,
  Subscription,
  WorkMessage,
  PublishOptions,
  EventRetention,
} from '../../bus.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../bus-defaults.js';
import { InMemoryBusConnection } from './in-memory-bus-connection.js';
import { InMemoryEventStreams } from './in-memory-event-streams.js';
import { InMemoryRequestReply } from './in-memory-request-reply.js';
import { InMemoryTimers } from './in-memory-timers.js';
import { InMemoryWorkQueues } from './in-memory-work-queues.js';

/**
 * The Bus in one process (embedded mode), with the NATS contract: payloads are copied through
 * JSON exactly once per hop, as they would be on the wire, and nothing more.
 */
export class InMemoryBus implements Bus {
  private readonly timers = new InMemoryTimers();
  private readonly requests: InMemoryRequestReply;
  private readonly events: InMemoryEventStreams;
  private readonly workQueues: InMemoryWorkQueues;
  private closed = false;

  /**
   * `maxMessageBytes`: largest request, reply or work message, as on NatsBus (WEFT_BUS_MAX_MESSAGE_BYTES).
   * `eventRetention`: of its event streams; `limits` (the default) as Weft's JetStream stream.
   */
  constructor(options: { logger?: Logger; maxMessageBytes?: number; eventRetention?: EventRetention } = {}) {
    const logger = options.logger ?? createLogger('bus');
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.requests = new InMemoryRequestReply(logger, maxMessageBytes);
    this.events = new InMemoryEventStreams(this.timers, logger, undefined, options.eventRetention);
    this.workQueues = new InMemoryWorkQueues(this.timers, logger, maxMessageBytes);
  }

  /** A connection for one service: its close() stops only what it subscribed. */
  connection(): Bus {
    return new InMemoryBusConnection(this);
  }

  request<Req, Res>(spec: RequestSpec<Req, Res>, payload: Req, options?: SendOptions): Promise<Res> {
    this.assertOpen();
    return this.requests.request(spec, payload, options);
  }

  async serve<Req, Res>(
    spec: RequestSpec<Req, Res>,
    handler: (payload: Req, context: MessageContext) => Promise<Res>,
  ): Promise<Subscription> {
    this.assertOpen();
    return this.requests.serve(spec, handler);
  }

  async ensureEventStream(spec: EventStreamSpec): Promise<void> {
    this.events.ensure(spec);
  }

  publish(subject: string, payload: unknown, options: PublishOptions): Promise<void> {
    this.assertOpen();
    return this.events.publish(subject, payload, options);
  }

  hasEventInterest(subject: string): boolean {
    return this.events.hasInterest(subject);
  }

  async subscribe(
    filter: string,
    options: { durable: string },
    handler: (event: PublishedEvent) => Promise<void>,
  ): Promise<Subscription> {
    this.assertOpen();
    return this.events.subscribe(filter, options.durable, handler);
  }

  enqueue<P>(spec: WorkQueueSpec<P>, payload: P, options: SendOptions & { msgId?: string } = {}): Promise<void> {
    this.assertOpen();
    return this.workQueues.enqueue(spec, payload, options);
  }

  async consume<P>(
    spec: WorkQueueSpec<P>,
    options: ConsumeOptions<P>,
    handler: (message: WorkMessage<P>) => Promise<void>,
  ): Promise<Subscription> {
    this.assertOpen();
    return this.workQueues.consume(spec, options, handler);
  }

  async isReady(): Promise<boolean> {
    return !this.closed;
  }

  /** Refuses new work, cancels pending redeliveries and waits for running handlers. */
  async close(): Promise<void> {
    this.closed = true;
    this.timers.clear();
    await Promise.all([this.requests.settled(), this.events.settled(), this.workQueues.settled()]);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the bus is closed');
  }
}
