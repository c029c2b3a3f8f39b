import { ProblemError } from '@weft/contracts';
import { JsonText } from './json-text.js';

/** The answer to a request or reply over the bus's message size limit, on both buses alike. */
export const messageTooLarge = (what: 'request' | 'reply' | 'message', bytes: number | undefined, maxBytes: number) =>
  new ProblemError(
    413,
    `The ${what} is too large for the bus (${bytes === undefined ? 'more than a JavaScript string holds' : `${bytes} bytes`}; at most ${maxBytes}).`,
  );

/**
 * JSON text of a payload. One too large for a JavaScript string (about 512 MiB: JSON.stringify
 * throws a RangeError) is refused as too large for the bus, like any payload over its limit.
 */
export function jsonTextOf(value: unknown, what: 'request' | 'reply' | 'message', maxBytes: number): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) throw messageTooLarge(what, undefined, maxBytes);
    throw error;
  }
}

/**
 * A copy of `value` through JSON (what the receiver of a NATS message gets), refused with a 413
 * past `maxBytes` of encoded JSON, as NatsBus refuses it.
 */
export function jsonCopyWithin<T>(value: T, maxBytes: number, what: 'request' | 'reply' | 'message'): T {
  if (value === undefined) return value;
  const json = jsonTextOf(value, what, maxBytes);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) throw messageTooLarge(what, bytes, maxBytes);
  return JSON.parse(json) as T;
}

/**
 * `jsonCopyWithin` of an HTTP reply (`{status, headers?, body?}`) whose object or array `body` is
 * left as its JSON text, a JsonText: encoded once, to measure it as the copy does, and not decoded
 * again only for the gateway to encode it once more. Anything else is copied as usual.
 */
export function httpReplyCopyWithin<T>(reply: T, maxBytes: number): T {
  const body: unknown = typeof reply === 'object' && reply !== null ? (reply as { body?: unknown }).body : undefined;
  if (typeof body !== 'object' || body === null || body instanceof JsonText)
    return jsonCopyWithin(reply, maxBytes, 'reply');
  const text = jsonTextOf(body, 'reply', maxBytes);
  // Kept as text only when it is an object or array (a Date's JSON is a string, for one).
  if (text === undefined || (text[0] !== '{' && text[0] !== '[')) return jsonCopyWithin(reply, maxBytes, 'reply');
  const rest = jsonTextOf({ ...reply, body: undefined }, 'reply', maxBytes);
  // The bytes of the whole reply's JSON: the rest, `"body":` (with a comma unless it is alone) and the body.
  const bytes = Buffer.byteLength(rest, 'utf8') + Buffer.byteLength(text, 'utf8') + (rest === '{}' ? 7 : 8);
  if (bytes > maxBytes) throw messageTooLarge('reply', bytes, maxBytes);
  return { ...(JSON.parse(rest) as object), body: new JsonText(text) } as T;
}
