import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OcrNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import type { NodeFileSource } from './node-files.js';
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
  /** The pdftoppm binary (tests point it at a missing file). */
  pdftoppm?: string;
}

const isPdf = (bytes: Buffer): boolean => bytes.subarray(0, 5).toString('latin1') === '%PDF-';

async function renderPdf(bytes: Buffer, maxPages: number, binary: string, signal: AbortSignal): Promise<Buffer[]> {
  const folder = await mkdtemp(join(tmpdir(), 'weft-pdf-'));
  try {
    await writeFile(join(folder, 'in.pdf'), bytes);
    await new Promise<void>((resolve, reject) =>
      execFile(
        binary,
        ['-r', '200', '-gray', '-png', '-l', String(maxPages), 'in.pdf', 'page'],
        { cwd: folder, signal },
        (error, _out, stderr) => {
          if (!error) return resolve();
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
            return reject(
              new NodeFailure(`PDF rendering needs pdftoppm: install poppler-utils (apt-get install poppler-utils)`),
            );
          }
          if (signal.aborted) return reject(signal.reason as Error);
          reject(
            new NodeFailure(`the PDF could not be rendered: ${String(stderr).trim().slice(0, 300) || error.message}`),
          );
        },
      ),
    );
    const pages = (await readdir(folder)).filter((name) => name.startsWith('page')).sort();
    return Promise.all(pages.map((name) => readFile(join(folder, name))));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
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
        ? await renderPdf(file.bytes, options.maxPages, options.pdftoppm ?? 'pdftoppm', signal)
        : [file.bytes];
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
