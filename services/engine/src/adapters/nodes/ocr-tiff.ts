import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import type { AbortableSemaphore } from './abortable-semaphore.js';
import type { PixelSize } from './ocr-image-size.js';
import type { OcrJob } from './ocr-workers.js';

/**
 * TIFF pages as PNG images for the OCR workers (tesseract.js reads PNG and JPEG, not TIFF): each
 * page decoded with utif2 (pure JS: LZW, Deflate, PackBits, CCITT, JPEG-in-TIFF) after its size
 * passed the pixel budget, flattened onto white, and written as an 8-bit grayscale PNG.
 *
 * Decoding a large page takes seconds of CPU: it runs in a worker thread of its own, never on the
 * engine's event loop, one page when the node asks for it (so at most one page's pixels are held),
 * and the thread is ended when the page is done or the node is stopped (cancel, timeout), however
 * far it got. Each page holds one of the engine's decoder slots (as many as OCR workers) while it
 * is decoded, so nodes waiting for a worker start no thread and hold no pixels meanwhile.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { crc32, deflateSync } = require('node:zlib');
const UTIF = require(workerData.utifPath);
const bytes = Buffer.from(workerData.bytes);
let directories;
const chunk = (type, data) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
};
// An 8-bit grayscale PNG of RGBA pixels composited onto white.
const grayPng = (rgba, width, height) => {
  const rows = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width + 1);
    for (let x = 0; x < width; x++) {
      const pixel = (y * width + x) * 4;
      const gray = (rgba[pixel] * 299 + rgba[pixel + 1] * 587 + rgba[pixel + 2] * 114) / 1000;
      const alpha = rgba[pixel + 3];
      rows[row + 1 + x] = Math.round((gray * alpha + 255 * (255 - alpha)) / 255);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
};
parentPort.on('message', ({ index, width, height }) => {
  try {
    try {
      directories ??= UTIF.decode(bytes);
    } catch (error) {
      throw new Error(String(error && error.message));
    }
    const directory = directories[index];
    if (!directory) throw new Error('page ' + (index + 1) + ' is missing');
    let rgba;
    try {
      UTIF.decodeImage(bytes, directory);
      rgba = UTIF.toRGBA8(directory);
    } catch (error) {
      throw new Error('page ' + (index + 1) + ': ' + String(error && error.message));
    }
    // utif2 keeps the decoded pixels on the directory: dropped, so pages are not held after use.
    delete directory.data;
    if (directory.width !== width || directory.height !== height || rgba.length < width * height * 4)
      throw new Error('page ' + (index + 1) + ' does not decode to its declared size');
    const png = new Uint8Array(grayPng(rgba, width, height));
    parentPort.postMessage({ index, png }, [png.buffer]);
  } catch (error) {
    parentPort.postMessage({ index, error: String(error.message) });
  }
});
`;

const utifPath = (): string => createRequire(import.meta.url).resolve('utif2');

/** The heap of a decoder thread: utif2's directories and tags (pixels live in external buffers). */
const DECODER_HEAP_MB = 256;

/**
 * The pages (sizes checked before) as PNGs, one at a time: each decoded while holding a decoder
 * slot, given back before the page goes to OCR, so a long TIFF waiting for a worker holds no slot
 * and other organizations' pages take their turn between its pages.
 */
export async function* tiffPagesAsPng(
  bytes: Buffer,
  pages: readonly PixelSize[],
  decoders: AbortableSemaphore,
  job: OcrJob,
): AsyncGenerator<Buffer> {
  for (const [index, page] of pages.entries()) {
    await decoders.acquire(job.signal, job.owner);
    let png: Buffer;
    try {
      png = await decodedPage(bytes, index, page, job.signal);
    } finally {
      decoders.release();
    }
    yield png;
  }
}

/** One page, decoded in a thread of its own that ends with it, or when `signal` aborts. */
async function decodedPage(bytes: Buffer, index: number, page: PixelSize, signal: AbortSignal): Promise<Buffer> {
  signal.throwIfAborted();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { utifPath: utifPath(), bytes },
    resourceLimits: { maxOldGenerationSizeMb: DECODER_HEAP_MB },
  });
  let stop: (() => void) | undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    stop = () => reject(signal.reason as Error);
    signal.addEventListener('abort', stop, { once: true });
  });
  stopped.catch(() => undefined);
  const crashed = new Promise<never>((_resolve, reject) => {
    worker.once('error', (error) => reject(new NodeFailure(`the TIFF could not be read: ${error.message}`)));
    worker.once('exit', () => reject(new NodeFailure('the TIFF could not be read: its decoder stopped')));
  });
  crashed.catch(() => undefined);
  try {
    const answer = new Promise<{ png?: Uint8Array; error?: string }>((resolve) => worker.once('message', resolve));
    worker.postMessage({ index, width: page.width, height: page.height });
    const { png, error } = await Promise.race([answer, stopped, crashed]);
    if (error !== undefined || !png) throw new NodeFailure(`the TIFF could not be read: ${error ?? 'no image'}`);
    return Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  } finally {
    if (stop) signal.removeEventListener('abort', stop);
    await worker.terminate();
  }
}
