import { Empty, nuid, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { ProblemError } from '@weft/contracts';
import { decodeJson } from '../../json-payload.js';
import { HEADER } from '../../message-headers.js';
import { messageTooLarge } from '../../message-size.js';
import {
  announcedBytes,
  CHUNK_HEADER,
  chunkHeaders,
  chunkPartOf,
  chunkSize,
  joinParts,
  splitInto,
} from './nats-chunks.js';

/** Milliseconds left until the request's deadline (at least 1: NATS refuses a zero timeout). */
export type TimeLeft = () => number;

const isProblemReply = (msg: Msg): boolean => msg.headers?.get(HEADER.problem) === '1';

/**
 * Sends a request too large for one message: its first chunk to the queue group, the others to the
 * replica that took it, each acknowledged (so a slow responder slows the sender down). Resolves to
 * the answer of the last chunk (the reply), or to the problem a responder answered on the way.
 */
export async function requestInChunks(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  headers: MsgHdrs,
  timeLeft: TimeLeft,
): Promise<Msg> {
  const parts = splitInto(data, chunkSize(nc, headers));
  const id = nuid.next();
  const count = parts.length;
  const firstHeaders = chunkHeaders({ index: 1, count, id }, { [CHUNK_HEADER.bytes]: String(data.length) }, headers);
  let answer = await nc.request(subject, parts[0] ?? Empty, { timeout: timeLeft(), headers: firstHeaders });
  const target = answer.headers?.get(CHUNK_HEADER.subject);
  if (!target) return answer;
  for (let index = 2; index <= count && !isProblemReply(answer); index += 1) {
    const partHeaders = chunkHeaders({ index, count, id });
    answer = await nc.request(target, parts[index - 1] ?? Empty, { timeout: timeLeft(), headers: partHeaders });
  }
  return answer;
}

/** The whole body of `reply`: a chunked reply's other chunks are fetched from the replica that answered. */
export async function wholeReply(
  nc: NatsConnection,
  reply: Msg,
  maxMessageBytes: number,
  timeLeft: TimeLeft,
): Promise<Uint8Array> {
  const part = chunkPartOf(reply.headers);
  if (!part) return reply.data;
  const bytes = announcedBytes(reply);
  // Refused before anything is buffered; the responder drops the unfetched chunks after its timeout.
  if (!(bytes <= maxMessageBytes)) throw messageTooLarge('reply', bytes, maxMessageBytes);
  const target = reply.headers?.get(CHUNK_HEADER.subject);
  if (!target) throw new ProblemError(502, 'A chunked reply without the subject of its other chunks.');
  const parts = [reply.data];
  for (let index = 2; index <= part.count; index += 1) {
    const headers = chunkHeaders({ index, count: part.count, id: part.id }, { [CHUNK_HEADER.fetch]: '1' });
    const chunk = await nc.request(target, Empty, { timeout: timeLeft(), headers });
    if (isProblemReply(chunk)) throw ProblemError.fromProblem(decodeJson(chunk.data));
    parts.push(chunk.data);
  }
  const whole = joinParts(parts);
  if (whole.length !== bytes) throw new ProblemError(502, 'The chunked reply does not have the size it announced.');
  return whole;
}
