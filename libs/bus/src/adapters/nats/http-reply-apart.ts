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

const isHttpReplyWithJsonBody = (value: unknown): value is { status: number; body: object } => {
  if (typeof value !== 'object' || value === null) return false;
  const reply = value as { status?: unknown; body?: unknown };
  return typeof reply.status === 'number' && typeof reply.body === 'object' && reply.body !== null;
};

/** The reply apart, or undefined when it is not an HTTP reply with an object or array body (sent whole). */
export function encodeReplyApart(reply: unknown): ReplyApart | undefined {
  if (!isHttpReplyWithJsonBody(reply)) return undefined;
  const rest = encodeJson({ ...reply, body: undefined });
  const body = encodeJson(reply.body);
  const payload = new Uint8Array(rest.length + body.length);
  payload.set(rest, 0);
  payload.set(body, rest.length);
  return { payload, bodyAt: rest.length };
}

/** The reply from a payload made by `encodeReplyApart`, its body as a JsonText. */
export function decodeReplyApart<T>(payload: Uint8Array, bodyAt: number): T {
  if (!Number.isInteger(bodyAt) || bodyAt < 0 || bodyAt > payload.length)
    throw new Error(`a reply whose body starts at byte ${bodyAt} of ${payload.length}`);
  const rest = decodeJson<Record<string, unknown>>(payload.subarray(0, bodyAt));
  const text = Buffer.from(payload.buffer, payload.byteOffset + bodyAt, payload.length - bodyAt).toString('utf8');
  return { ...rest, body: new JsonText(text) } as T;
}
