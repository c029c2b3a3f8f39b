import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { Empty, nuid, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import type { WorkQueueSpec } from '@weft/contracts';
import type { Logger } from '@weft/observability';
import { joinParts, payloadRoom, splitInto } from './nats-chunks.js';
import { workChunkStream, workChunkSubjects } from './nats-chunk-subjects.js';
import type { NatsStreams } from './nats-streams.js';

/**
 * A work message too large for one JetStream message. Its consumers share a durable across
 * replicas, so its chunks cannot be further messages of the queue: they go first to a stream of
 * their own (`<queue stream>_CHUNKS`, one subject per chunk), and the queued message carries only
 * these headers; the replica that takes it reads the chunks, and removes them once it acked.
 */
export const LARGE_WORK_HEADER = {
  id: 'weft-large-id',
  count: 'weft-large-chunks',
  bytes: 'weft-large-bytes',
} as const;

const chunkSubject = (queueSubject: string, id: string, index: number) => `${queueSubject}.chunks.${id}.${index}`;

/** A stream-get answer carries the chunk in base64 JSON: 4/3 of it plus the API envelope must fit max_payload. */
const API_ENVELOPE_ROOM = 4096;

export class NatsLargeWork {
  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly streams: NatsStreams,
    private readonly logger: Logger,
  ) {}

  /** Whether `data` (with `headers`) fits in one JetStream message. */
  fits(data: Uint8Array, headers: MsgHdrs): boolean {
    return data.length <= payloadRoom(this.nc, headers);
  }

  /** Stores the chunks, then queues the message that names them; a duplicate's chunks are removed. */
  async publish(spec: WorkQueueSpec<unknown>, data: Uint8Array, headers: MsgHdrs, msgId?: string): Promise<void> {
    const stream = workChunkStream(spec.stream);
    await this.streams.ensureChunkStream(stream, workChunkSubjects(spec.subject));
    const size = Math.floor(((this.nc.info!.max_payload - API_ENVELOPE_ROOM) * 3) / 4);
    const parts = splitInto(data, size);
    const id = nuid.next();
    for (const [index, part] of parts.entries()) await this.js.publish(chunkSubject(spec.subject, id, index + 1), part);
    headers.set(LARGE_WORK_HEADER.id, id);
    headers.set(LARGE_WORK_HEADER.count, String(parts.length));
    headers.set(LARGE_WORK_HEADER.bytes, String(data.length));
    const ack = await this.js.publish(spec.subject, Empty, { ...(msgId ? { msgID: msgId } : {}), headers });
    if (ack.duplicate) await this.release(spec, id);
  }

  /** The whole payload of a queued message: its own data, or its chunks put back together. */
  async read(spec: WorkQueueSpec<unknown>, msg: JsMsg): Promise<Uint8Array> {
    const id = msg.headers?.get(LARGE_WORK_HEADER.id);
    if (!id) return msg.data;
    const count = Number(msg.headers?.get(LARGE_WORK_HEADER.count));
    const parts: Uint8Array[] = [];
    for (let index = 1; index <= count; index += 1) {
      const stored = await this.jsm.streams.getMessage(workChunkStream(spec.stream), {
        last_by_subj: chunkSubject(spec.subject, id, index),
      });
      if (!stored) throw new Error(`chunk ${index}/${count} of work message ${id} is missing`);
      parts.push(stored.data);
    }
    const whole = joinParts(parts);
    if (whole.length !== Number(msg.headers?.get(LARGE_WORK_HEADER.bytes))) {
      throw new Error(`work message ${id} does not have the size it announced`);
    }
    return whole;
  }

  /** Removes the chunks of a message that was acked (handled or dead-lettered). */
  async released(spec: WorkQueueSpec<unknown>, msg: JsMsg): Promise<void> {
    const id = msg.headers?.get(LARGE_WORK_HEADER.id);
    if (id) await this.release(spec, id);
  }

  private async release(spec: WorkQueueSpec<unknown>, id: string): Promise<void> {
    try {
      await this.jsm.streams.purge(workChunkStream(spec.stream), { filter: `${spec.subject}.chunks.${id}.>` });
    } catch (error) {
      // Left behind, they take room but nothing reads them again.
      this.logger.warn({ err: error, subject: spec.subject, id }, 'chunks of a handled work message not removed');
    }
  }
}
