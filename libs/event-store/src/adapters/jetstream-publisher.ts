import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  PubHeaders,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { headers, nanos, type NatsConnection } from '@nats-io/nats-core';
import { EVENTS_STREAM, allEvents, type PublishedEventEnvelope } from '@weft/contracts';
import {
  POSITION_HEADER,
  PermanentPublishError,
  type EventMessage,
  type EventPublisher,
  type PublishOutcome,
} from '../outbox/event-publisher.js';

export interface JetStreamPublisherOptions {
  /** Stream name; default WEFT_EVENTS. Tests pass a unique one. */
  stream?: string;
  /** Subjects of the stream; default ['weft.events.>']. */
  subjects?: string[];
  /** Deduplication window for Nats-Msg-Id; default 2 minutes. */
  duplicateWindowMs?: number;
  /** Oldest message the stream keeps (WEFT_EVENTS_STREAM_MAX_AGE_SECONDS); default 7 days. */
  maxAgeMs?: number;
  /** Most bytes the stream keeps, oldest dropped first (WEFT_EVENTS_STREAM_MAX_BYTES); default 1 GiB. */
  maxBytes?: number;
}

export const DEFAULT_EVENTS_STREAM_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
export const DEFAULT_EVENTS_STREAM_MAX_BYTES = 1024 ** 3;

/** Room left in a message for the headers (msg id, position, expectations) besides the envelope. */
const HEADER_ALLOWANCE_BYTES = 1024;
/** JetStream's refusal of a message larger than the stream's max_msg_size. */
const MESSAGE_TOO_LARGE_FOR_STREAM = 10054;

/**
 * Publishes committed events to a JetStream stream. The stream is created when missing and its
 * retention (age, bytes; oldest discarded first) is brought to the configured limits on every
 * start, so published history can never fill the JetStream store that the work queues share.
 */
export class JetStreamPublisher implements EventPublisher {
  readonly enforcesPreviousMsgId = true;
  private readonly js: JetStreamClient;
  private readonly encoder = new TextEncoder();
  /**
   * The stream's last message when `lastPublishedPosition` read it: a message naming it as its
   * predecessor expects the stream's last sequence instead. nats-server 2.9 forgets a last message
   * id across a restart once it is older than the duplicate window, and then refuses any message
   * that expects it, for good; the sequence it keeps.
   */
  private resumePoint: { msgId: string; sequence: number } | undefined;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
  ) {
    this.js = jetstream(nc);
  }

  static async create(nc: NatsConnection, options: JetStreamPublisherOptions = {}): Promise<JetStreamPublisher> {
    const jsm = await jetstreamManager(nc);
    const stream = options.stream ?? EVENTS_STREAM;
    const retention: Partial<StreamConfig> = {
      max_age: nanos(options.maxAgeMs ?? DEFAULT_EVENTS_STREAM_MAX_AGE_MS),
      max_bytes: options.maxBytes ?? DEFAULT_EVENTS_STREAM_MAX_BYTES,
      discard: DiscardPolicy.Old,
    };
    const existing = await jsm.streams.info(stream).catch((error: unknown) => {
      if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return undefined;
      throw error;
    });
    if (!existing) {
      await jsm.streams.add({
        name: stream,
        subjects: options.subjects ?? [allEvents.wildcard],
        duplicate_window: nanos(options.duplicateWindowMs ?? 120_000),
        ...retention,
      });
    } else if (
      existing.config.max_age !== retention.max_age ||
      existing.config.max_bytes !== retention.max_bytes ||
      existing.config.discard !== retention.discard
    ) {
      // Streams created before retention was configured (or with other limits) take the new ones.
      await jsm.streams.update(stream, retention);
    }
    return new JetStreamPublisher(nc, jsm, stream);
  }

  async publish(
    subject: string,
    message: EventMessage,
    msgId: string,
    previousMsgId?: string,
  ): Promise<PublishOutcome> {
    const payload = this.payloadOf(message);
    const hdrs = headers();
    hdrs.set(POSITION_HEADER, String(message.position));
    const resumesAt = previousMsgId !== undefined && previousMsgId === this.resumePoint?.msgId;
    try {
      const ack = await this.js.publish(subject, payload, {
        msgID: msgId,
        headers: hdrs,
        // Nats-Expected-Last-Msg-Id: a message whose predecessor failed fails too, never overtakes it.
        expect: {
          streamName: this.stream,
          ...(resumesAt
            ? { lastSequence: this.resumePoint?.sequence }
            : previousMsgId
              ? { lastMsgID: previousMsgId }
              : {}),
        },
      });
      return { duplicate: ack.duplicate };
    } catch (error) {
      // A stream whose max_msg_size an operator set below the server's max_payload refuses it for good.
      if (error instanceof JetStreamApiError && error.code === MESSAGE_TOO_LARGE_FOR_STREAM)
        throw new PermanentPublishError(`event of ${payload.length} bytes: ${error.message}`);
      throw error;
    }
  }

  /**
   * A core NATS publish with the same headers as `publish`: the stream stores it (or refuses it)
   * without an acknowledgement, so no reply, timer or promise per message. Only the acknowledged
   * publish of a later message, chained to this one by Nats-Expected-Last-Msg-Id, confirms it.
   */
  send(subject: string, message: EventMessage, msgId: string, previousMsgId?: string): void {
    const payload = this.payloadOf(message);
    const hdrs = headers();
    hdrs.set(POSITION_HEADER, String(message.position));
    hdrs.set(PubHeaders.MsgIdHdr, msgId);
    hdrs.set(PubHeaders.ExpectedStreamHdr, this.stream);
    if (previousMsgId !== undefined && previousMsgId === this.resumePoint?.msgId)
      hdrs.set(PubHeaders.ExpectedLastSeqHdr, String(this.resumePoint.sequence));
    else if (previousMsgId) hdrs.set(PubHeaders.ExpectedLastMsgIdHdr, previousMsgId);
    this.nc.publish(subject, payload, { headers: hdrs });
  }

  /** The message's bytes; PermanentPublishError when they could never pass the server's max_payload. */
  private payloadOf(message: EventMessage): Uint8Array {
    const payload = this.encoder.encode(message.json);
    const maxPayload = this.nc.info?.max_payload;
    if (maxPayload !== undefined && payload.length + HEADER_ALLOWANCE_BYTES > maxPayload) {
      throw new PermanentPublishError(
        `event of ${payload.length} bytes exceeds the NATS server's max_payload of ${maxPayload} bytes`,
      );
    }
    return payload;
  }

  async lastPublishedPosition(): Promise<number> {
    this.resumePoint = undefined;
    const info = await this.jsm.streams.info(this.stream);
    if (info.state.messages === 0) return 0;
    const message = await this.jsm.streams.getMessage(this.stream, { seq: info.state.last_seq });
    if (!message) return 0;
    const msgId = message.header.get(PubHeaders.MsgIdHdr);
    if (msgId) this.resumePoint = { msgId, sequence: info.state.last_seq };
    const header = message.header.get(POSITION_HEADER);
    if (header) return Number(header);
    return Number(message.json<PublishedEventEnvelope>().position ?? 0);
  }
}
