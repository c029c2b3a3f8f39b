import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { headers, nanos, type NatsConnection } from '@nats-io/nats-core';
import { EVENTS_STREAM, allEvents, type PublishedEventEnvelope } from '@weft/contracts';
import { POSITION_HEADER, type EventPublisher } from '../outbox/event-publisher.js';

export interface JetStreamPublisherOptions {
  /** Stream name; default WEFT_EVENTS. Tests pass a unique one. */
  stream?: string;
  /** Subjects of the stream; default ['weft.events.>']. */
  subjects?: string[];
  /** Deduplication window for Nats-Msg-Id; default 2 minutes. */
  duplicateWindowMs?: number;
}

/** Publishes committed events to a JetStream stream (created when missing). */
export class JetStreamPublisher implements EventPublisher {
  readonly enforcesPreviousMsgId = true;
  private readonly js: JetStreamClient;
  private readonly stream: string;
  private readonly encoder = new TextEncoder();

  private constructor(
    nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    stream: string,
  ) {
    this.js = jetstream(nc);
    this.stream = stream;
  }

  static async create(nc: NatsConnection, options: JetStreamPublisherOptions = {}): Promise<JetStreamPublisher> {
    const jsm = await jetstreamManager(nc);
    const stream = options.stream ?? EVENTS_STREAM;
    try {
      await jsm.streams.info(stream);
    } catch {
      await jsm.streams.add({
        name: stream,
        subjects: options.subjects ?? [allEvents.wildcard],
        duplicate_window: nanos(options.duplicateWindowMs ?? 120_000),
      });
    }
    return new JetStreamPublisher(nc, jsm, stream);
  }

  async publish(
    subject: string,
    envelope: PublishedEventEnvelope,
    msgId: string,
    previousMsgId?: string,
  ): Promise<void> {
    const hdrs = headers();
    hdrs.set(POSITION_HEADER, String(envelope.position));
    await this.js.publish(subject, this.encoder.encode(JSON.stringify(envelope)), {
      msgID: msgId,
      headers: hdrs,
      // Nats-Expected-Last-Msg-Id: a message whose predecessor failed fails too, never overtakes it.
      expect: previousMsgId ? { streamName: this.stream, lastMsgID: previousMsgId } : { streamName: this.stream },
    });
  }

  async lastPublishedPosition(): Promise<number> {
    const info = await this.jsm.streams.info(this.stream);
    if (info.state.messages === 0) return 0;
    const message = await this.jsm.streams.getMessage(this.stream, { seq: info.state.last_seq });
    if (!message) return 0;
    const header = message.header.get(POSITION_HEADER);
    if (header) return Number(header);
    return Number(message.json<PublishedEventEnvelope>().position ?? 0);
  }
}
