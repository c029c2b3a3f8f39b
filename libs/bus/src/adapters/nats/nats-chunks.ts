import { headers as createHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';

/**
 * A message larger than the server's max_payload travels as N chunk messages. Every chunk names
 * its set and place; the first one also the total size and where the other chunks are exchanged.
 */
export const CHUNK_HEADER = {
  /** `i/N`, 1-based. */
  part: 'weft-chunk',
  id: 'weft-chunk-id',
  /** Total bytes of the whole message (first chunk only): the receiver refuses it before buffering. */
  bytes: 'weft-chunk-bytes',
  /** The responder's own subject where the remaining chunks are sent or fetched (first chunk's answer). */
  subject: 'weft-chunk-subject',
  /** Set to `1` on a request that fetches chunk `i` of a stored reply. */
  fetch: 'weft-chunk-fetch',
} as const;

/** Room kept in each message for the chunk headers, beside the message's own headers. */
const CHUNK_HEADER_ROOM = 512;
/** Below this, chunking would only make thousands of tiny messages: the server is misconfigured. */
export const MIN_CHUNK_BYTES = 1024;

export interface ChunkPart {
  index: number;
  count: number;
  id: string;
}

/** The chunk headers of a message, or undefined for a whole message. */
export function chunkPartOf(headers: MsgHdrs | undefined): ChunkPart | undefined {
  const part = headers?.get(CHUNK_HEADER.part);
  if (!part) return undefined;
  const [index = NaN, count = NaN] = part.split('/').map(Number);
  const id = headers?.get(CHUNK_HEADER.id) ?? '';
  if (!Number.isInteger(index) || !Number.isInteger(count) || index < 1 || index > count || !id) return undefined;
  return { index, count, id };
}

/** Headers of chunk `index` of `count`, plus `extra` (e.g. the message's own headers on the first chunk). */
export function chunkHeaders(part: ChunkPart, extra: Record<string, string> = {}, base?: MsgHdrs): MsgHdrs {
  const headers = createHeaders();
  if (base) for (const [key, values] of base) for (const value of values) headers.append(key, value);
  headers.set(CHUNK_HEADER.part, `${part.index}/${part.count}`);
  headers.set(CHUNK_HEADER.id, part.id);
  for (const [key, value] of Object.entries(extra)) headers.set(key, value);
  return headers;
}

/** Bytes `headers` take on the wire: `NATS/1.0`, one `name: value` line each, a blank line. */
function encodedLength(headers: MsgHdrs): number {
  let length = 'NATS/1.0\r\n\r\n'.length;
  for (const [name, values] of headers) {
    for (const value of values) length += Buffer.byteLength(`${name}: ${value}\r\n`, 'utf8');
  }
  return length;
}

/** Largest payload that fits in one message beside `headers` (read from the server's INFO). */
export function payloadRoom(nc: NatsConnection, headers?: MsgHdrs): number {
  return nc.info!.max_payload - (headers ? encodedLength(headers) : 0);
}

/** Payload bytes per chunk: what the server takes, minus the message's headers and the chunk headers. */
export function chunkSize(nc: NatsConnection, headers?: MsgHdrs): number {
  const size = payloadRoom(nc, headers) - CHUNK_HEADER_ROOM;
  if (size < MIN_CHUNK_BYTES)
    throw new Error(`NATS max_payload ${nc.info!.max_payload} is too small to chunk messages`);
  return size;
}

export function splitInto(data: Uint8Array, size: number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < data.length; offset += size) parts.push(data.subarray(offset, offset + size));
  return parts;
}

export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.length;
  }
  return whole;
}

/** Total bytes announced by a first chunk (NaN when missing or malformed). */
export const announcedBytes = (msg: Msg): number => Number(msg.headers?.get(CHUNK_HEADER.bytes) ?? NaN);
