import { mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * Tesseract workers, started once per engine and reused: one scheduler per language set with
 * `size` workers. Language data comes from the `@tesseract.js-data/<lang>` packages only; a worker
 * is never created without `langPath`, because tesseract.js would then fetch a CDN and crash the
 * process on failure.
 */
export interface OcrWord {
  text: string;
  confidence: number;
  bbox: { x0: number; y0: number; x1: number; y1: number };
}

export interface OcrPage {
  text: string;
  words: OcrWord[];
}

interface Scheduler {
  addJob(action: 'recognize', image: Buffer, options: object, output: object): Promise<{ data: TesseractPage }>;
  terminate(): Promise<unknown>;
}

interface TesseractPage {
  text: string;
  blocks?: { paragraphs: { lines: { words: { text: string; confidence: number; bbox: OcrWord['bbox'] }[] }[] }[] }[];
}

const require = createRequire(import.meta.url);

/** The folder holding `<lang>.traineddata.gz` from the language's npm package. */
function languageFolder(language: string): string {
  try {
    return join(dirname(require.resolve(`@tesseract.js-data/${language}/package.json`)), '4.0.0_best_int');
  } catch {
    throw new NodeFailure(
      `OCR language "${language}" is not installed: add the npm package @tesseract.js-data/${language}`,
    );
  }
}

export class OcrWorkers {
  private readonly schedulers = new Map<string, Promise<Scheduler>>();

  constructor(
    private readonly size: number,
    private readonly loadRuntime: () => Promise<typeof import('tesseract.js')> = () => import('tesseract.js'),
  ) {}

  async recognize(image: Buffer, languages: string[], signal: AbortSignal): Promise<OcrPage> {
    const key = [...languages].sort().join('+');
    const pending = this.schedulerFor(key, languages);
    const scheduler = await pending;
    const job = scheduler.addJob('recognize', image, {}, { text: true, blocks: true });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => {
        // A recognition cannot be interrupted: its workers are ended and started afresh next time.
        if (this.schedulers.get(key) === pending) this.schedulers.delete(key);
        void scheduler.terminate().catch(() => undefined);
        reject(signal.reason as Error);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const { data } = await Promise.race([job, aborted]);
      return { text: data.text, words: wordsOf(data) };
    } catch (error) {
      if (signal.aborted) throw error;
      // tesseract.js rejects a job with the worker's message (a string), not an Error.
      throw new NodeFailure(`the image could not be read: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    const all = [...this.schedulers.values()];
    this.schedulers.clear();
    await Promise.all(all.map(async (scheduler) => (await scheduler.catch(() => undefined))?.terminate()));
  }

  private schedulerFor(key: string, languages: string[]): Promise<Scheduler> {
    let scheduler = this.schedulers.get(key);
    if (!scheduler) {
      scheduler = this.start(languages);
      this.schedulers.set(key, scheduler);
      scheduler.catch(() => this.schedulers.delete(key));
    }
    return scheduler;
  }

  private async start(languages: string[]): Promise<Scheduler> {
    const folders = languages.map(languageFolder);
    let tesseract: typeof import('tesseract.js');
    try {
      tesseract = await this.loadRuntime();
    } catch (error) {
      throw new NodeFailure(`OCR runtime missing: install the npm package tesseract.js (${(error as Error).message})`);
    }
    const langPath = folders.length === 1 ? folders[0]! : await joinedLanguageFolder(languages, folders);
    const scheduler = tesseract.createScheduler();
    const workers = await Promise.all(
      Array.from({ length: this.size }, () =>
        tesseract.createWorker(languages, tesseract.OEM.LSTM_ONLY, {
          langPath,
          cacheMethod: 'none',
          gzip: true,
          // Without a handler tesseract.js also throws a failed job's error from its message
          // listener: an uncaught exception that would end the engine. The job's promise rejects.
          errorHandler: () => undefined,
        }),
      ),
    );
    for (const worker of workers) scheduler.addWorker(worker);
    return scheduler as unknown as Scheduler;
  }
}

/** tesseract.js takes one langPath: languages from several packages are linked into one folder. */
async function joinedLanguageFolder(languages: string[], folders: string[]): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'weft-ocr-'));
  await mkdir(folder, { recursive: true });
  await Promise.all(
    languages.map((language, index) =>
      symlink(join(folders[index]!, `${language}.traineddata.gz`), join(folder, `${language}.traineddata.gz`)),
    ),
  );
  return folder;
}

function wordsOf(page: TesseractPage): OcrWord[] {
  const words: OcrWord[] = [];
  for (const block of page.blocks ?? [])
    for (const paragraph of block.paragraphs)
      for (const line of paragraph.lines)
        for (const word of line.words) words.push({ text: word.text, confidence: word.confidence, bbox: word.bbox });
  return words;
}
