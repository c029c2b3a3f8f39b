import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OcrNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import type { NodeFileSource } from './node-files.js';
import { imagePixelSize, largestPageArea } from './ocr-image-size.js';
import type { OcrPage, OcrWorkers } from './ocr-workers.js';

/**
 * `ocrNode`: text of an image (PNG, JPEG, TIFF) or a PDF (rendered page by page with poppler's
 * `pdftoppm`) -> `{text, pages: [{text, words: [{text, confidence, bbox}]}]}`.
 */
export interface OcrNodeOptions {
  workers: OcrWorkers;
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

async function renderPdf(bytes: Buffer, options: OcrNodeOptions, signal: AbortSignal): Promise<Buffer[]> {
  const folder = await mkdtemp(join(tmpdir(), 'weft-pdf-'));
  try {
    await writeFile(join(folder, 'in.pdf'), bytes);
    const pages = String(options.maxPages);
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
    const rendered = (await readdir(folder)).filter((name) => name.startsWith('page')).sort();
    return Promise.all(rendered.map((name) => readFile(join(folder, name))));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

function checkedImage(bytes: Buffer, maxPixels: number): Buffer {
  const size = imagePixelSize(bytes);
  if (size && size.width * size.height > maxPixels) {
    throw new NodeFailure(
      `the image is ${size.width}x${size.height} pixels, more than WEFT_OCR_MAX_PIXELS (${maxPixels})`,
    );
  }
  return bytes;
}

export const ocrNodeExecutor = (options: OcrNodeOptions): NodeExecutor<OcrNodeConfig> => ({
  type: 'ocrNode',
  async execute(config, _input, context) {
    const timeoutMs = config.timeoutMs ?? options.timeoutMs;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]);
    const languages = config.languages ?? ['eng'];
    try {
      const file = await options.files.read(config.file, context.organizationId);
      const images = isPdf(file.bytes)
        ? await renderPdf(file.bytes, options, signal)
        : [checkedImage(file.bytes, options.maxPixels)];
      const pages: OcrPage[] = [];
      for (const image of images) pages.push(await options.workers.recognize(image, languages, signal));
      return { output: { text: pages.map((page) => page.text).join('\n'), pages } };
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (signal.aborted) throw new NodeFailure(`OCR timed out after ${timeoutMs} ms`);
      throw error;
    }
  },
});
