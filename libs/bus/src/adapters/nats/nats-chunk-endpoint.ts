import { Empty, nuid, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { ProblemError } from '@weft/contracts';
import type { Logger } from '@weft/observability';
import { encodeJson } from '../../json-payload.js';
import { HEADER } from '../../message-headers.js';
import { messageTooLarge } from '../../message-size.js';
import {
  announcedBytes,
  CHUNK_HEADER,
  chunkHeaders,
  chunkPartOf,
  chunkSize,
  joinParts,
  MIN_CHUNK_BYTES,
  payloadRoom,
  splitInto,
  type ChunkPart,
} from './nats-chunks.js';
import { natsChunkSubjects } from './nats-chunk-subjects.js';
import { ExpiringChunkSets } from './nats-chunk-store.js';
import { fromNatsHeaders, toNatsHeaders } from './nats-headers.js';

export interface ChunkLimits {
  /** Largest whole request or reply (WEFT_BUS_MAX_MESSAGE_BYTES). */
  maxMessageBytes: number;
  /** A chunk set whose next chunk does not come within this time is dropped. */
  chunkTimeoutMs: number;
}

interface IncomingRequest {
  headers: Record<string, string>;
  parts: Uint8Array[];
  count: number;
  bytes: number;
  received: number;
}

/** A whole request put together from its chunks, for the handler; `replyTo` is its last chunk. */
type AssembledRequest = (data: Uint8Array, headers: Record<string, string>, replyTo: Msg) => void;

const CHUNK_HEADER_NAMES = new Set<string>(Object.values(CHUNK_HEADER));

/** Sends a problem as the answer to `msg`; a failure here can only be logged (the caller times out). */
function respondProblem(msg: Msg, error: ProblemError, logger: Logger): void {
  try {
    msg.respond(encodeJson(error.problem), { headers: toNatsHeaders({ [HEADER.problem]: '1' }) });
  } catch (failure) {
    logger.warn({ err: failure, subject: msg.subject }, 'problem reply could not be sent');
  }
}

/**
 * One serving replica's side of chunked messages for one request subject: it gathers the chunks of
 * requests whose first chunk it took from the queue group, and hands out the chunks of its replies
 * too large for one message, on a subject of its own (`<request subject>.chunked.<id>`).
 */
export class ChunkEndpoint {
  readonly subject: string;
  private readonly incoming: ExpiringChunkSets<IncomingRequest>;
  private readonly outgoing: ExpiringChunkSets<Uint8Array[]>;
  private readonly subscription: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    requestSubject: string,
    private readonly limits: ChunkLimits,
    private readonly logger: Logger,
    private readonly onRequest: AssembledRequest,
  ) {
    this.subject = natsChunkSubjects(requestSubject).replace('*', nuid.next());
    this.incoming = new ExpiringChunkSets(limits.chunkTimeoutMs);
    this.outgoing = new ExpiringChunkSets(limits.chunkTimeoutMs);
    this.subscription = nc.subscribe(this.subject, {
      callback: (error, msg) => {
        if (error) logger.error({ err: error, subject: this.subject }, 'chunk subscription failed');
        else this.receive(msg);
      },
    });
  }

  /** The first chunk of a request (from the queue group): keep it and tell the sender where the rest goes. */
  begin(msg: Msg, part: ChunkPart): void {
    const bytes = announcedBytes(msg);
    if (!(bytes <= this.limits.maxMessageBytes)) {
      respondProblem(msg, messageTooLarge('request', bytes, this.limits.maxMessageBytes), this.logger);
      return;
    }
    // Every chunk but the last is full, so more chunks than this could only be empty ones piling up.
    if (part.index !== 1 || part.count > Math.ceil(bytes / MIN_CHUNK_BYTES) + 1 || msg.data.length === 0) {
      respondProblem(
        msg,
        new ProblemError(400, 'A chunked request must start with its first, non-empty chunk.'),
        this.logger,
      );
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(fromNatsHeaders(msg.headers)).filter(([name]) => !CHUNK_HEADER_NAMES.has(name)),
    );
    this.incoming.put(part.id, { headers, parts: [msg.data], count: part.count, bytes, received: msg.data.length });
    this.respond(msg, Empty, toNatsHeaders({ [CHUNK_HEADER.subject]: this.subject }));
  }

  /**
   * Answers `msg` with `body`: in one message when it fits, else with its first chunk while the
   * others wait here to be fetched. Any failure to send answers a small problem instead.
   * `bodyAt`: the reply is an HTTP reply sent apart (http-reply-apart.ts), its body from that byte.
   */
  reply(msg: Msg, body: Uint8Array, problem: boolean, bodyAt?: number): void {
    try {
      if (body.length > this.limits.maxMessageBytes) {
        respondProblem(msg, messageTooLarge('reply', body.length, this.limits.maxMessageBytes), this.logger);
        return;
      }
      const headers = problem
        ? toNatsHeaders({ [HEADER.problem]: '1' })
        : bodyAt !== undefined
          ? toNatsHeaders({ [HEADER.httpBodyAt]: String(bodyAt) })
          : undefined;
      if (body.length <= payloadRoom(this.nc, headers)) {
        msg.respond(body, headers && { headers });
        return;
      }
      const parts = splitInto(body, chunkSize(this.nc, headers));
      const id = nuid.next();
      this.outgoing.put(id, parts);
      const first = chunkHeaders(
        { index: 1, count: parts.length, id },
        { [CHUNK_HEADER.bytes]: String(body.length), [CHUNK_HEADER.subject]: this.subject },
        headers,
      );
      msg.respond(parts[0] ?? Empty, { headers: first });
    } catch (error) {
      this.logger.warn({ err: error, subject: msg.subject }, 'reply could not be sent; answering a problem');
      respondProblem(msg, new ProblemError(502, 'The reply could not be sent.'), this.logger);
    }
  }

  close(): void {
    this.incoming.clear();
    this.outgoing.clear();
    if (!this.subscription.isClosed()) this.subscription.unsubscribe();
  }

  private receive(msg: Msg): void {
    const part = chunkPartOf(msg.headers);
    if (!part) {
      respondProblem(msg, new ProblemError(400, 'A chunk message without valid chunk headers.'), this.logger);
    } else if (msg.headers?.get(CHUNK_HEADER.fetch) === '1') {
      this.sendStoredChunk(msg, part);
    } else {
      this.addRequestChunk(msg, part);
    }
  }

  private addRequestChunk(msg: Msg, part: ChunkPart): void {
    const set = this.incoming.touch(part.id);
    const received = (set?.received ?? 0) + msg.data.length;
    const misplaced = !set || part.index !== set.parts.length + 1 || part.count !== set.count;
    if (misplaced || msg.data.length === 0 || received > set.bytes) {
      this.incoming.delete(part.id);
      respondProblem(msg, expired('request'), this.logger);
      return;
    }
    set.parts.push(msg.data);
    set.received = received;
    if (part.index < part.count) {
      this.respond(msg, Empty);
      return;
    }
    this.incoming.delete(part.id);
    if (received !== set.bytes) {
      respondProblem(
        msg,
        new ProblemError(400, 'The chunked request does not have the size it announced.'),
        this.logger,
      );
      return;
    }
    this.onRequest(joinParts(set.parts), set.headers, msg);
  }

  private sendStoredChunk(msg: Msg, part: ChunkPart): void {
    const parts = this.outgoing.touch(part.id);
    if (!parts || part.index < 2 || part.count !== parts.length) {
      respondProblem(msg, expired('reply'), this.logger);
      return;
    }
    if (part.index === part.count) this.outgoing.delete(part.id);
    this.respond(msg, parts[part.index - 1] ?? Empty, chunkHeaders(part));
  }

  private respond(msg: Msg, data: Uint8Array, headers?: MsgHdrs): void {
    try {
      msg.respond(data, headers && { headers });
    } catch (error) {
      this.logger.warn({ err: error, subject: msg.subject }, 'chunk answer could not be sent');
    }
  }
}

const expired = (what: 'request' | 'reply') =>
  new ProblemError(408, `The chunked ${what} expired or is unknown: its chunks came too slowly or out of order.`);
