import { mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { FairQueue } from './fair-queue.js';

/**
 * Tesseract workers, started once per engine and reused: up to `size` workers per language set,
 * each running one recognition at a time, jobs waiting for a free one in turn by organization (FairQueue). Language data
 * comes from the `@tesseract.js-data/<lang>` packages only; a worker is never created without
 * `langPath`, because tesseract.js would then fetch a CDN and crash the process on failure.
 *
 * A recognition cannot be interrupted: a job stopped (cancel, timeout) while it runs ends its own
 * worker, which is replaced for the next job; a job stopped while it waits just leaves the queue.
 * Other organizations' jobs, running or waiting, are never touched, and a worker still starting
 * is never ended (tesseract.js fails uncatchably when a worker ends mid-start).
 */
export interface OcrWord {
  text: string;
  confidence: number;
  bbox: { x0: number; y0: number; x1: number; y1: number };
}

/** Who waits (jobs are taken in turn by organization) and what stops the job. */
export interface OcrJob {
  signal: AbortSignal;
  owner: string;
}

export interface OcrPage {
  text: string;
  words: OcrWord[];
}

interface TesseractWorker {
  recognize(image: Buffer, options: object, output: object): Promise<{ data: TesseractPage }>;
  terminate(): Promise<unknown>;
}

interface TesseractPage {
  text: string;
  blocks?: { paragraphs: { lines: { words: { text: string; confidence: number; bbox: OcrWord['bbox'] }[] }[] }[] }[];
}

interface Waiter {
  resolve: (worker: TesseractWorker) => void;
  reject: (error: Error) => void;
}

/** The workers of one language set. */
interface LanguagePool {
  languages: string[];
  idle: TesseractWorker[];
  /** Workers alive or starting. */
  alive: number;
  waiting: FairQueue<Waiter>;
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
  private readonly pools = new Map<string, LanguagePool>();
  private closed = false;
  /** Workers ended to stop a recognition (tests observe it). */
  stoppedWorkers = 0;

  constructor(
    private readonly size: number,
    private readonly loadRuntime: () => Promise<typeof import('tesseract.js')> = () => import('tesseract.js'),
  ) {}

  async recognize(image: Buffer, languages: string[], job: OcrJob): Promise<OcrPage> {
    const { signal } = job;
    signal.throwIfAborted();
    const folders = languages.map(languageFolder);
    const pool = this.poolFor(languages);
    const worker = await this.acquire(pool, folders, job);
    const recognition = worker.recognize(image, {}, { text: true, blocks: true });
    // Raced below; its own rejection must never go unhandled (it would end the engine).
    recognition.catch(() => undefined);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(signal.reason as Error);
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const { data } = await Promise.race([recognition, aborted]);
      this.release(pool, worker);
      return { text: data.text, words: wordsOf(data) };
    } catch (error) {
      // Stopped or failed mid-recognition: this worker is ended (the CPU it holds freed) and replaced.
      this.discard(pool, worker, folders);
      if (signal.aborted) throw error;
      // tesseract.js rejects a job with the worker's message (a string), not an Error.
      throw new NodeFailure(`the image could not be read: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    for (const pool of pools) for (const waiter of pool.waiting.drain()) waiter.reject(new Error('OCR is stopping'));
    await Promise.all(
      pools.flatMap((pool) => pool.idle.splice(0).map((worker) => worker.terminate().catch(() => undefined))),
    );
  }

  private poolFor(languages: string[]): LanguagePool {
    const key = [...languages].sort().join('+');
    let pool = this.pools.get(key);
    if (!pool) {
      pool = { languages, idle: [], alive: 0, waiting: new FairQueue<Waiter>() };
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** An idle worker, a new one while the pool has room, else the next one freed (in turn by owner). */
  private acquire(pool: LanguagePool, folders: string[], { signal, owner }: OcrJob): Promise<TesseractWorker> {
    const idle = pool.idle.pop();
    if (idle) return Promise.resolve(idle);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (worker: TesseractWorker) => {
          signal.removeEventListener('abort', leave);
          resolve(worker);
        },
        reject: (error: Error) => {
          signal.removeEventListener('abort', leave);
          reject(error);
        },
      };
      const leave = (): void => {
        pool.waiting.remove(owner, waiter);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', leave, { once: true });
      pool.waiting.push(owner, waiter);
      if (pool.alive < this.size) this.startWorker(pool, folders);
    });
  }

  private release(pool: LanguagePool, worker: TesseractWorker): void {
    const next = pool.waiting.shift();
    if (next) next.resolve(worker);
    else if (this.closed) void worker.terminate().catch(() => undefined);
    else pool.idle.push(worker);
  }

  private discard(pool: LanguagePool, worker: TesseractWorker, folders: string[]): void {
    pool.alive -= 1;
    this.stoppedWorkers += 1;
    void worker.terminate().catch(() => undefined);
    if (pool.waiting.size > 0 && !this.closed) this.startWorker(pool, folders);
  }

  /**
   * Starts a worker for the pool's next waiter; a start that fails fails that waiter, and every
   * waiter when no other worker of the pool is alive to serve them (they would wait forever).
   */
  private startWorker(pool: LanguagePool, folders: string[]): void {
    pool.alive += 1;
    this.createWorker(pool.languages, folders).then(
      (worker) => this.release(pool, worker),
      (error: unknown) => {
        pool.alive -= 1;
        const failure = error instanceof Error ? error : new NodeFailure(`OCR worker did not start: ${String(error)}`);
        const failed = pool.alive === 0 ? pool.waiting.drain() : [pool.waiting.shift()];
        for (const waiter of failed) waiter?.reject(failure);
      },
    );
  }

  private async createWorker(languages: string[], folders: string[]): Promise<TesseractWorker> {
    let tesseract: typeof import('tesseract.js');
    try {
      tesseract = await this.loadRuntime();
    } catch (error) {
      throw new NodeFailure(`OCR runtime missing: install the npm package tesseract.js (${(error as Error).message})`);
    }
    const langPath = folders.length === 1 ? folders[0]! : await joinedLanguageFolder(languages, folders);
    const worker = await tesseract.createWorker(languages, tesseract.OEM.LSTM_ONLY, {
      langPath,
      cacheMethod: 'none',
      gzip: true,
      // Without a handler tesseract.js also throws a failed job's error from its message
      // listener: an uncaught exception that would end the engine. The job's promise rejects.
      errorHandler: () => undefined,
    });
    return worker as unknown as TesseractWorker;
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
