/** Payloads travel as JSON on every transport; `undefined` travels as an empty body. */
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeJson = (value: unknown): Uint8Array =>
  value === undefined ? new Uint8Array() : encoder.encode(JSON.stringify(value));

export const decodeJson = <T>(data: Uint8Array): T =>
  (data.length === 0 ? undefined : JSON.parse(decoder.decode(data))) as T;

/** What the receiver of a NATS message would get: the in-memory bus passes payloads through this. */
export const jsonCopy = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
