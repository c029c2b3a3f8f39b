import { ProblemError } from '@weft/contracts';

/** Payloads travel as JSON on every transport; `undefined` travels as an empty body. */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload too large for a JavaScript string (about 512 MiB) is a 413 like any payload over the bus's limit. */
export function encodeJson(value: unknown): Uint8Array {
  if (value === undefined) return new Uint8Array();
  try {
    return encoder.encode(JSON.stringify(value));
  } catch (error) {
    if (error instanceof RangeError)
      throw new ProblemError(413, 'The message is too large for the bus (more than a JavaScript string holds).');
    throw error;
  }
}

export const decodeJson = <T>(data: Uint8Array): T =>
  (data.length === 0 ? undefined : JSON.parse(decoder.decode(data))) as T;

/** What the receiver of a NATS message would get: the in-memory bus passes payloads through this. */
export const jsonCopy = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
