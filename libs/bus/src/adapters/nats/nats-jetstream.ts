import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { WorkQueueSpec } from '@weft/contracts';
import { extractTraceContext, withSpan, type Logger } from '@weft/observability';
import type { ConsumeOptions, PublishedEvent, SendOptions, Subscription, WorkMessage } from '../../bus.js';
import { deadLettered } from '../../dead-letter.js';
import { InFlight } from '../../in-flight.js';
import { decodeJson, encodeJson } from '../../json-payload.js';
import { messageContext, outgoingHeaders } from '../../message-headers.js';
import { messageTooLarge } from '../../message-size.js';
import { DEFAULT_ACK_WAIT_MS, DEFAULT_RETRY_DELAY_MS, retryDelayMs } from '../../bus-defaults.js';
import { gatedPullLoop } from './gated-pull-loop.js';
import { payloadRoom } from './nats-chunks.js';
import type { NatsLargeWork } from './nats-large-work.js';
import { fromNatsHeaders, toNatsHeaders } from './nats-headers.js';
import type { NatsStreams } from './nats-streams.js';

const encoder = new TextEncoder();

const spanAttributes = (subject: string) => ({ 'messaging.system': 'nats', 'messaging.destination.name': subject });

/**
 * Publishes to whichever stream stores `subject`; `msgId` makes retries idempotent (Nats-Msg-Id).
 * An event is never chunked: one larger than the server's max_payload or `maxBytes` is refused
 * with a 413 problem (the event store keeps events below it, WEFT_EVENT_MAX_BYTES).
 */
export async function jetStreamPublish(
  js: JetStreamClient,
  subject: string,
  payload: unknown,
  options: SendOptions & { msgId?: string; json?: string },
  limit: { nc: NatsConnection; maxBytes: number },
): Promise<void> {
  await withSpan(
    `publish ${subject}`,
    spanAttributes(subject),
    async () => {
      const data = options.json === undefined ? encodeJson(payload) : encoder.encode(options.json);
      const headers = toNatsHeaders(outgoingHeaders(options));
      const maxBytes = Math.min(limit.maxBytes, payloadRoom(limit.nc, headers));
      if (data.length > maxBytes) throw messageTooLarge('message', data.length, maxBytes);
      await js.publish(subject, data, { ...(options.msgId ? { msgID: options.msgId } : {}), headers });
    },
    { kind: 'producer' },
  );
}

/**
 * Queues a work message; one larger than the server's max_payload travels in chunks
 * (nats-large-work.ts), one larger than `maxBytes` is refused with a 413 problem.
 */
export async function jetStreamEnqueue<P>(
  large: NatsLargeWork,
  js: JetStreamClient,
  spec: WorkQueueSpec<P>,
  payload: P,
  options: SendOptions & { msgId?: string },
  maxBytes: number,
): Promise<void> {
  await withSpan(
    `publish ${spec.subject}`,
    spanAttributes(spec.subject),
    async () => {
      const data = encodeJson(payload);
      if (data.length > maxBytes) throw messageTooLarge('message', data.length, maxBytes);
      const headers = toNatsHeaders(outgoingHeaders(options));
      if (large.fits(data, headers)) {
        await js.publish(spec.subject, data, { ...(options.msgId ? { msgID: options.msgId } : {}), headers });
      } else {
        await large.publish(spec, data, headers, options.msgId);
      }
    },
    { kind: 'producer' },
  );
}

interface PullLoopOptions {
  stream: string;
  durable: string;
  concurrency: number;
  logger: Logger;
  /** Handles one message; acks, naks or terminates it itself. */
  handle: (msg: JsMsg) => Promise<void>;
}

/**
 * Pulls from a durable consumer and runs up to `concurrency` messages at once. Stopping closes
 * the pull, hands back messages not yet started (nak) and waits for running ones.
 */
async function pullLoop(js: JetStreamClient, options: PullLoopOptions): Promise<Subscription> {
  const consumer = await js.consumers.get(options.stream, options.durable);
  const messages: ConsumerMessages = await consumer.consume({ max_messages: options.concurrency });
  const inFlight = new InFlight();
  let stopping = false;
  const slots: Array<() => void> = [];
  const freeSlot = (): Promise<void> =>
    inFlight.size < options.concurrency ? Promise.resolve() : new Promise((resolve) => slots.push(resolve));
  const loop = (async () => {
    for await (const msg of messages) {
      await freeSlot();
      if (stopping) {
        msg.nak();
        continue;
      }
      void inFlight.track(options.handle(msg)).finally(() => slots.shift()?.());
    }
  })().catch((error: unknown) => options.logger.error({ err: error, durable: options.durable }, 'pull loop failed'));
  return {
    unsubscribe: async () => {
      stopping = true;
      await messages.close().catch(() => undefined);
      await loop;
      await inFlight.settled();
    },
  };
}

const safely = (logger: Logger, action: () => void): void => {
  try {
    action();
  } catch (error) {
    // The connection is gone: the server redelivers after ack_wait.
    logger.warn({ err: error }, 'ack could not be sent');
  }
};

/** Durable subscription to published events: one at a time, in stream order, acked when handled. */
export async function jetStreamSubscribe(
  js: JetStreamClient,
  streams: NatsStreams,
  filter: string,
  durable: string,
  handler: (event: PublishedEvent) => Promise<void>,
  logger: Logger,
): Promise<Subscription> {
  const stream = await streams.streamFor(filter);
  await streams.ensureDurableConsumer(stream, { durable, filterSubject: filter, ackWaitMs: DEFAULT_ACK_WAIT_MS });
  return pullLoop(js, {
    stream,
    durable,
    concurrency: 1,
    logger,
    handle: async (msg) => {
      const headers = fromNatsHeaders(msg.headers);
      try {
        await withSpan(
          `receive ${msg.subject}`,
          spanAttributes(msg.subject),
          () => handler({ subject: msg.subject, payload: decodeJson(msg.data), headers, sequence: msg.seq }),
          { kind: 'consumer', parent: extractTraceContext(headers) },
        );
        safely(logger, () => msg.ack());
      } catch (error) {
        logger.error({ err: error, subject: msg.subject, durable }, 'event handler failed; redelivering');
        safely(logger, () => msg.nak(retryDelayMs(DEFAULT_RETRY_DELAY_MS, msg.info.deliveryCount)));
      }
    },
  });
}

/** Shared durable pull consumer of a work queue: each message handled once across replicas. */
export async function jetStreamConsume<P>(
  js: JetStreamClient,
  streams: NatsStreams,
  spec: WorkQueueSpec<P>,
  options: ConsumeOptions<P>,
  handler: (message: WorkMessage<P>) => Promise<void>,
  logger: Logger,
  large: NatsLargeWork,
): Promise<Subscription> {
  const queue = spec as WorkQueueSpec<unknown>;
  const ackWaitMs = options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
  await streams.ensureWorkQueueStream(spec.stream, spec.subject);
  // No server-side max_deliver: the server would stop redelivering a message nobody recorded.
  await streams.ensureDurableConsumer(spec.stream, {
    durable: options.durable,
    filterSubject: spec.subject,
    ackWaitMs,
  });
  const loopOptions = {
    stream: spec.stream,
    durable: options.durable,
    concurrency: Math.max(1, options.concurrency ?? 1),
    logger,
    handle: async (msg: JsMsg) => {
      const headers = fromNatsHeaders(msg.headers);
      const deliveryCount = msg.info.deliveryCount;
      let data: Uint8Array = msg.data;
      const message = (): WorkMessage<P> => ({
        payload: decodeJson<P>(data),
        context: messageContext(headers),
        deliveryCount,
      });
      // Long work keeps its lease: tell the server we are still at it before ack_wait runs out.
      const keepAlive = setInterval(() => safely(logger, () => msg.working()), Math.max(100, ackWaitMs / 2));
      try {
        data = await large.read(queue, msg);
        await withSpan(
          `consume ${spec.subject}`,
          { ...spanAttributes(spec.subject), 'messaging.delivery_count': deliveryCount },
          () => handler(message()),
          { kind: 'consumer', parent: extractTraceContext(headers) },
        );
        safely(logger, () => msg.ack());
        await large.released(queue, msg);
      } catch (error) {
        const { deadLetter } = options;
        const lastAttempt = deadLetter !== undefined && deliveryCount >= deadLetter.afterDeliveries;
        logger.error({ err: error, subject: spec.subject, deliveryCount, lastAttempt }, 'work message failed');
        if (lastAttempt && (await deadLettered(deadLetter, message(), error, logger))) {
          safely(logger, () => msg.ack());
          await large.released(queue, msg);
        } else {
          safely(logger, () => msg.nak(retryDelayMs(options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS, deliveryCount)));
        }
      } finally {
        clearInterval(keepAlive);
      }
    },
  };
  return options.gate ? gatedPullLoop(js, { ...loopOptions, gate: options.gate }) : pullLoop(js, loopOptions);
}
