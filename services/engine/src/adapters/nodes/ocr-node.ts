import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OcrNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import type { AbortableSemaphore } from './abortable-semaphore.js';
import type { NodeFileSource } from './node-files.js';
import { imagePixelSize, largestPageArea, tiffPageSizes } from './ocr-image-size.js';
import { tiffPagesAsPng } from './ocr-tiff.js';
import type { OcrJob, OcrPage, OcrWorkers } from './ocr-workers.js';

/**
 * `ocrNode`: text of an image (PNG, JPEG, TIFF: each of its pages) or a PDF (rendered page by page
 * with poppler's `pdftoppm`) -> `{text, pages: [{text, words: [{text, confidence, bbox}]}]}`.
 */
export interface OcrNodeOptions {
  workers: OcrWorkers;
  /** TIFF decoding and PDF rendering running at once (as many as OCR workers). */
  decoders: AbortableSemaphore;
  files: NodeFileSource;
  /** WEFT_OCR_MAX_PAGES. */
  maxPages: number;
  /** WEFT_OCR_TIMEOUT_MS: when the node sets no timeoutMs. */
  timeoutMs: number;
  /** WEFT_OCR_MAX_PIXELS: largest image (or rendered page) handed to a worker. */
  maxPixels: number;
  /** The poppler binaries (tests point them at a missing file). */
  pdftoppm?: string;
  pdfinfo?: string;
}

const RENDER_DPI = 200;

const run = (binary: string, args: string[], cwd: string, signal: AbortSignal): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(binary, args, { cwd, signal, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (!error) return resolve(String(stdout));
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(
          new NodeFailure(`PDF rendering needs ${binary}: install poppler-utils (apt-get install poppler-utils)`),
        );
      }
      if (signal.aborted) return reject(signal.reason as Error);
      reject(new NodeFailure(`the PDF could not be rendered: ${String(stderr).trim().slice(0, 300) || error.message}`));
    }),
  );

const isPdf = (bytes: Buffer): boolean => bytes.subarray(0, 5).toString('latin1') === '%PDF-';

/** The PDF's pages rendered to PNG files, read one at a time as the node asks for them. */
async function* renderPdf(bytes: Buffer, options: OcrNodeOptions, job: OcrJob): AsyncGenerator<Buffer> {
  const { signal } = job;
  const folder = await mkdtemp(join(tmpdir(), 'weft-pdf-'));
  try {
    await writeFile(join(folder, 'in.pdf'), bytes);
    const pages = String(options.maxPages);
    await options.decoders.acquire(signal, job.owner);
    try {
      // A page too large for the pixel budget at 200 dpi is rendered at a lower resolution instead.
      const info = await run(options.pdfinfo ?? 'pdfinfo', ['-l', pages, 'in.pdf'], folder, signal);
      const area = largestPageArea(info);
      const dpi = area > 0 ? Math.min(RENDER_DPI, Math.floor(72 * Math.sqrt(options.maxPixels / area))) : RENDER_DPI;
      if (dpi < 1) throw new NodeFailure(`a PDF page is too large to render within ${options.maxPixels} pixels`);
      await run(
        options.pdftoppm ?? 'pdftoppm',
        ['-r', String(dpi), '-gray', '-png', '-l', pages, 'in.pdf', 'page'],
        folder,
        signal,
      );
    } finally {
      options.decoders.release();
    }
    const rendered = (await readdir(folder)).filter((name) => name.startsWith('page')).sort();
    for (const name of rendered) yield await readFile(join(folder, name));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Only images whose pixel size is read from their header reach a worker or a decoder: PNG, JPEG
 * and TIFF (its first WEFT_OCR_MAX_PAGES pages, turned into PNGs one by one: tesseract.js does not
 * read TIFF). GIF, BMP and WebP would be decoded by tesseract.js unchecked, so they are refused.
 */
function checkedImages(bytes: Buffer, options: OcrNodeOptions, job: OcrJob): AsyncIterable<Buffer> | Buffer[] {
  const { maxPixels, maxPages } = options;
  const tiff = tiffPageSizes(bytes, maxPages);
  const sizes = tiff ?? [imagePixelSize(bytes)].filter((size) => size !== undefined);
  if (sizes.length === 0) {
    throw new NodeFailure(
      'the file is not a PNG, JPEG, TIFF or PDF whose size can be read: OCR reads only these (convert GIF, BMP or WebP first)',
    );
  }
  for (const [index, size] of sizes.entries()) {
    if (size.width * size.height > maxPixels) {
      const which = tiff ? `page ${index + 1} of the TIFF` : 'the image';
      throw new NodeFailure(
        `${which} is ${size.width}x${size.height} pixels, more than WEFT_OCR_MAX_PIXELS (${maxPixels})`,
      );
    }
  }
  return tiff ? tiffPagesAsPng(bytes, tiff, options.decoders, job) : [bytes];
}

export const ocrNodeExecutor = (options: OcrNodeOptions): NodeExecutor<OcrNodeConfig> => ({
  type: 'ocrNode',
  async execute(config, _input, context) {
    const timeoutMs = config.timeoutMs ?? options.timeoutMs;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]);
    const languages = config.languages ?? ['eng'];
    try {
      const file = await options.files.read(config.file, context.organizationId);
      const job: OcrJob = { signal, owner: context.organizationId };
      const images = isPdf(file.bytes) ? renderPdf(file.bytes, options, job) : checkedImages(file.bytes, options, job);
      const pages: OcrPage[] = [];
      for await (const image of images) pages.push(await options.workers.recognize(image, languages, job));
      return { output: { text: pages.map((page) => page.text).join('\n'), pages } };
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (signal.aborted) throw new NodeFailure(`OCR timed out after ${timeoutMs} ms`);
      throw error;
    }
  },
});
