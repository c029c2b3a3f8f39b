import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
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
} from '../../bus.js';
import { DEFAULT_CHUNK_TIMEOUT_MS, DEFAULT_MAX_MESSAGE_BYTES } from '../../bus-defaults.js';
import type { ChunkLimits } from './nats-chunk-endpoint.js';
import { natsSecurityOptions, type NatsSecurity } from './nats-connect-options.js';
import { jetStreamConsume, jetStreamEnqueue, jetStreamPublish, jetStreamSubscribe } from './nats-jetstream.js';
import { NatsLargeWork } from './nats-large-work.js';
import { natsRequest, natsServe } from './nats-request-reply.js';
import { NatsStreams } from './nats-streams.js';

const READY_TIMEOUT_MS = 2_000;

/** Operators see disconnects and reconnects; the client itself reconnects forever. */
async function logConnectionStatus(connection: NatsConnection, logger: Logger): Promise<void> {
  for await (const status of connection.status()) {
    if (status.type === 'disconnect' || status.type === 'reconnect') {
      logger.warn({ status: status.type, server: status.server }, 'nats connection');
    } else if (status.type === 'error') {
      logger.error({ err: status.error }, 'nats connection error');
    }
  }
}

export interface NatsBusOptions {
  /** e.g. WEFT_NATS_URL. */
  servers: string | string[];
  /** Connection name shown by the server (service name and replica). */
  name?: string;
  logger?: Logger;
  /** Credentials and TLS (WEFT_NATS_USER, WEFT_NATS_PASSWORD, WEFT_NATS_CREDS, WEFT_NATS_TLS_*). */
  security?: NatsSecurity;
  /** Where replies to this connection arrive; its NATS user may subscribe only there (natsInboxPrefix). */
  inboxPrefix?: string;
  connection?: Partial<NodeConnectionOptions>;
  /** Largest request, reply or stream message (WEFT_BUS_MAX_MESSAGE_BYTES); larger ones get a 413 problem. */
  maxMessageBytes?: number;
  /** A chunked message whose next chunk does not come within this time is dropped (tests shorten it). */
  chunkTimeoutMs?: number;
}

/** The Bus over NATS: core request/reply in queue groups, JetStream for events and work queues. */
export class NatsBus implements Bus {
  private readonly subscriptions = new Set<Subscription>();
  private closing: Promise<void> | undefined;

  private constructor(
    /** The underlying connection (tests use it to simulate a crash). */
    readonly connection: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly streams: NatsStreams,
    private readonly logger: Logger,
    private readonly limits: ChunkLimits,
    private readonly largeWork: NatsLargeWork,
  ) {}

  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const connection = await connect({
      servers: options.servers,
      name: options.name,
      maxReconnectAttempts: -1,
      // Else every request and JetStream publish builds two Errors (a stack capture each) up front,
      // in case it times out: a third of the outbox relay's time. Request/reply timeouts name the
      // subject (natsRequest); other timeouts (JetStream publish, management calls) log without
      // their caller's stack.
      noAsyncTraces: true,
      ...(options.inboxPrefix && { inboxPrefix: options.inboxPrefix }),
      ...(await natsSecurityOptions(options.security)),
      ...options.connection,
    });
    const jsm = await jetstreamManager(connection);
    const logger = options.logger ?? createLogger('bus');
    void logConnectionStatus(connection, logger);
    const limits: ChunkLimits = {
      maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
      chunkTimeoutMs: options.chunkTimeoutMs ?? DEFAULT_CHUNK_TIMEOUT_MS,
    };
    const js = jetstream(connection);
    const streams = new NatsStreams(jsm);
    const largeWork = new NatsLargeWork(connection, js, jsm, streams, logger);
    return new NatsBus(connection, js, streams, logger, limits, largeWork);
  }

  request<Req, Res>(spec: RequestSpec<Req, Res>, payload: Req, options?: SendOptions): Promise<Res> {
    return natsRequest(this.connection, spec, payload, options ?? {}, this.limits);
  }

  async serve<Req, Res>(
    spec: RequestSpec<Req, Res>,
    handler: (payload: Req, context: MessageContext) => Promise<Res>,
  ): Promise<Subscription> {
    const subscription = this.track(natsServe(this.connection, spec, handler, this.logger, this.limits));
    // Resolve only once the server knows the subscription, so a request sent next finds it.
    await this.connection.flush();
    return subscription;
  }

  ensureEventStream(spec: EventStreamSpec): Promise<void> {
    return this.streams.ensureEventStream(spec.stream, [spec.wildcard]);
  }

  publish(subject: string, payload: unknown, options: PublishOptions): Promise<void> {
    return jetStreamPublish(this.js, subject, payload, options, this.streamLimit());
  }

  async subscribe(
    filter: string,
    options: { durable: string },
    handler: (event: PublishedEvent) => Promise<void>,
  ): Promise<Subscription> {
    return this.track(await jetStreamSubscribe(this.js, this.streams, filter, options.durable, handler, this.logger));
  }

  async enqueue<P>(spec: WorkQueueSpec<P>, payload: P, options: SendOptions & { msgId?: string } = {}): Promise<void> {
    await this.streams.ensureWorkQueueStream(spec.stream, spec.subject);
    await jetStreamEnqueue(this.largeWork, this.js, spec, payload, options, this.limits.maxMessageBytes);
  }

  async consume<P>(
    spec: WorkQueueSpec<P>,
    options: ConsumeOptions<P>,
    handler: (message: WorkMessage<P>) => Promise<void>,
  ): Promise<Subscription> {
    return this.track(
      await jetStreamConsume(this.js, this.streams, spec, options, handler, this.logger, this.largeWork),
    );
  }

  async isReady(): Promise<boolean> {
    if (this.closing || this.connection.isClosed() || this.connection.isDraining()) return false;
    // While reconnecting a flush waits for the server; a readiness probe must answer now.
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS)));
    const flushed = this.connection.flush().then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([flushed, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops every subscription (letting running handlers finish), then drains the connection. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled([...this.subscriptions].map((subscription) => subscription.unsubscribe()));
      if (!this.connection.isClosed()) await this.connection.drain().catch(() => undefined);
    })();
    return this.closing;
  }

  private streamLimit() {
    return { nc: this.connection, maxBytes: this.limits.maxMessageBytes };
  }

  private track(subscription: Subscription): Subscription {
    this.subscriptions.add(subscription);
    return {
      unsubscribe: async () => {
        this.subscriptions.delete(subscription);
        await subscription.unsubscribe();
      },
    };
  }
}
