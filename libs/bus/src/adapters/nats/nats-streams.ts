import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

/** Creates streams and durable consumers once per process, tolerating other replicas doing the same. */
export class NatsStreams {
  private readonly ensured = new Map<string, Promise<void>>();

  constructor(private readonly jsm: JetStreamManager) {}

  /** An event stream (limits retention: every subscriber reads every event). */
  ensureEventStream(stream: string, subjects: string[]): Promise<void> {
    return this.ensureStream({ name: stream, subjects, retention: RetentionPolicy.Limits });
  }

  /** A work-queue stream: a message is removed once one consumer acked it. */
  ensureWorkQueueStream(stream: string, subject: string): Promise<void> {
    return this.ensureStream({ name: stream, subjects: [subject], retention: RetentionPolicy.Workqueue });
  }

  /** The chunks of work messages too large for one message, kept until their consumer removes them. */
  ensureChunkStream(stream: string, subjects: string): Promise<void> {
    return this.ensureStream({ name: stream, subjects: [subjects], retention: RetentionPolicy.Limits });
  }

  /** The stream that stores `subject` (a subscriber's filter may hold wildcards). */
  async streamFor(subject: string): Promise<string> {
    return this.jsm.streams.find(subject);
  }

  ensureDurableConsumer(
    stream: string,
    config: { durable: string; filterSubject: string; ackWaitMs: number },
  ): Promise<void> {
    const key = `consumer:${stream}:${config.durable}`;
    return this.ensured.get(key) ?? this.remember(key, this.addConsumer(stream, config));
  }

  private async addConsumer(
    stream: string,
    config: { durable: string; filterSubject: string; ackWaitMs: number },
  ): Promise<void> {
    try {
      await this.jsm.consumers.add(stream, {
        durable_name: config.durable,
        filter_subject: config.filterSubject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(config.ackWaitMs),
        max_deliver: -1,
      });
    } catch (error) {
      // Already created by another replica (possibly with other settings, which then stay).
      if (!(await this.exists(() => this.jsm.consumers.info(stream, config.durable)))) throw error;
    }
  }

  private ensureStream(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    const key = `stream:${config.name}`;
    return this.ensured.get(key) ?? this.remember(key, this.addStream(config));
  }

  private async addStream(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    if (await this.exists(() => this.jsm.streams.info(config.name))) return;
    try {
      await this.jsm.streams.add(config);
    } catch (error) {
      // Another replica created it between our info and add.
      if (!(await this.exists(() => this.jsm.streams.info(config.name)))) throw error;
    }
  }

  /** True when the info call succeeds, false when JetStream says the stream or consumer is unknown. */
  private async exists(info: () => Promise<unknown>): Promise<boolean> {
    try {
      await info();
      return true;
    } catch (error) {
      const missing =
        error instanceof JetStreamApiError &&
        (error.code === JetStreamApiCodes.StreamNotFound || error.code === JetStreamApiCodes.ConsumerNotFound);
      if (missing) return false;
      throw error;
    }
  }

  private remember(key: string, work: Promise<void>): Promise<void> {
    this.ensured.set(key, work);
    work.catch(() => this.ensured.delete(key));
    return work;
  }
}
