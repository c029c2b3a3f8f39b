import { Readable } from 'node:stream';

/** Wraps a stream so the number of bytes that passed through is known once it ends. */
export function countBytes(source: Readable): { stream: Readable; bytes: () => number } {
  let bytes = 0;
  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of source as AsyncIterable<Buffer | string>) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      bytes += buffer.byteLength;
      yield buffer;
    }
  }
  return { stream: Readable.from(counted(), { objectMode: false }), bytes: () => bytes };
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks);
}
