import { ProblemError } from '@weft/contracts';
import { JsonText } from '../../json-text.js';
import { decodeJson, encodeJson } from '../../json-payload.js';

/**
 * An HTTP reply (`{status, headers?, body}`) sent over NATS to a caller that asked for its body as
 * JSON text (the gateway, `replyBodyAsJsonText`): the reply without its body, then the body, as
 * one payload, with the byte where the body starts in a header. The gateway then sends the body's
 * text on as it came, instead of parsing the whole reply into objects for fastify to serialize
 * again (an execution record of a few KB per synchronous run).
 */
export interface ReplyApart {
  payload: Uint8Array;
  bodyAt: number;
}

const isHttpReply = (value: unknown): value is { status: number; body: unknown } =>
  typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'number';

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * The reply apart, or undefined when it is not an HTTP reply whose body encodes to a JSON object
 * or array (sent whole then, decoded by the caller): a Date, a string or a `toJSON` that gives
 * something else stays what the in-memory bus answers for it too.
 */
export function encodeReplyApart(reply: unknown): ReplyApart | undefined {
  if (!isHttpReply(reply) || typeof reply.body !== 'object' || reply.body === null) return undefined;
  const body = encodeJson(reply.body);
  if (body[0] !== OPEN_BRACE && body[0] !== OPEN_BRACKET) return undefined;
  const rest = encodeJson({ ...reply, body: undefined });
  const payload = new Uint8Array(rest.length + body.length);
  payload.set(rest, 0);
  payload.set(body, rest.length);
  return { payload, bodyAt: rest.length };
}

/**
 * The reply from a payload made by `encodeReplyApart`, its body as a JsonText; `bodyAt` is the
 * header's text. A reply that does not hold together is a 502 naming `subject`, as a garbled
 * reply of any kind is. The body's text is passed on unchecked, as the in-memory bus passes its
 * own encoding: the service made it with JSON.stringify.
 */
export function decodeReplyApart<T>(payload: Uint8Array, bodyAt: string, subject: string): T {
  const at = /^[1-9]\d{0,9}$/.test(bodyAt) ? Number(bodyAt) : Number.NaN;
  let rest: unknown;
  try {
    if (!(at < payload.length)) throw new Error(`the body starts at byte ${bodyAt} of ${payload.length}`);
    rest = decodeJson(payload.subarray(0, at));
  } catch {
    throw new ProblemError(502, `A malformed reply from ${subject}.`);
  }
  if (!isHttpReply(rest)) throw new ProblemError(502, `A malformed reply from ${subject}: no status.`);
  const text = Buffer.from(payload.buffer, payload.byteOffset + at, payload.length - at).toString('utf8');
  return { ...rest, body: new JsonText(text) } as T;
}
