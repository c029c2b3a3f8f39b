import { ProblemError } from '@weft/contracts';

/** The answer to a request or reply over the bus's message size limit, on both buses alike. */
export const messageTooLarge = (what: 'request' | 'reply' | 'message', bytes: number, maxBytes: number) =>
  new ProblemError(413, `The ${what} is too large for the bus (${bytes} bytes; at most ${maxBytes}).`);

/**
 * A copy of `value` through JSON (what the receiver of a NATS message gets), refused with a 413
 * past `maxBytes` of encoded JSON, as NatsBus refuses it.
 */
export function jsonCopyWithin<T>(value: T, maxBytes: number, what: 'request' | 'reply' | 'message'): T {
  if (value === undefined) return value;
  const json = JSON.stringify(value);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) throw messageTooLarge(what, bytes, maxBytes);
  return JSON.parse(json) as T;
}
