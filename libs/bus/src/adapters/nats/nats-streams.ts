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

  /** The stream that stores `subject` (a subscriber's filter may hold wildcards). */
  async streamFor(subject: string): Promise<string> {
    return this.jsm.streams.find(subject);
  }

  async ensureDurableConsumer(
    stream: string,
    config: { durable: string; filterSubject: string; ackWaitMs: number; maxDeliver?: number },
  ): Promise<void> {
    const key = `consumer:${stream}:${config.durable}`;
    const existing = this.ensured.get(key);
    if (existing) return existing;
    const created = this.jsm.consumers
      .add(stream, {
        durable_name: config.durable,
        filter_subject: config.filterSubject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(config.ackWaitMs),
        max_deliver: config.maxDeliver ?? -1,
      })
      .then(
        () => undefined,
        // Already created by another replica (possibly with other settings, which then stay).
        (error: unknown) =>
          this.jsm.consumers.info(stream, config.durable).then(
            () => undefined,
            () => Promise.reject(error),
          ),
      );
    return this.remember(key, created);
  }

  private ensureStream(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    const key = `stream:${config.name}`;
    const existing = this.ensured.get(key);
    if (existing) return existing;
    const created = this.jsm.streams.info(config.name).then(
      () => undefined,
      async (error: unknown) => {
        if (!(error instanceof JetStreamApiError) || error.code !== JetStreamApiCodes.StreamNotFound) throw error;
        await this.jsm.streams.add(config).catch(async (addError: unknown) => {
          // Another replica created it between our info and add.
          await this.jsm.streams.info(config.name).catch(() => Promise.reject(addError));
        });
      },
    );
    return this.remember(key, created);
  }

  private remember(key: string, work: Promise<void>): Promise<void> {
    this.ensured.set(key, work);
    work.catch(() => this.ensured.delete(key));
    return work;
  }
}
