import type { Response } from 'undici';

/**
 * Reads a response body up to a byte limit (WEFT_HTTP_RESPONSE_MAX_BYTES), so that a huge or
 * endless answer fails the caller instead of filling the engine's memory.
 */
export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`response body is larger than ${maxBytes} bytes (WEFT_HTTP_RESPONSE_MAX_BYTES)`);
  }
}

export async function readCappedBody(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > maxBytes) {
    await response.body?.cancel();
    throw new ResponseTooLargeError(maxBytes);
  }
  if (!response.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
