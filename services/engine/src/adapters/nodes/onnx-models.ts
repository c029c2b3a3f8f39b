import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { blobKeyOf, type BlobStorage } from '@weft/blob-storage';
import type { FileReference } from '@weft/contracts';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { OnnxModelFormatError, usesExternalData } from './onnx-external-data.js';
import { ONNX_WORKER_SOURCE } from './onnx-worker-source.js';
import type { TensorInput } from './onnx-tensors.js';

/**
 * ONNX models per engine, run in one worker thread that loads onnxruntime-node once: a model is
 * loaded once (keyed by the SHA-256 of its bytes) and its session reused by every execution; at
 * most WEFT_ONNX_MAX_CACHED_MODELS stay loaded, the least recently used released first. Model
 * bytes come from the organization's blobs or a base64 `data:` URL. The worker keeps native
 * inference off the event loop and its typed arrays in one realm.
 *
 * Native inference cannot be interrupted, and ending a worker thread while onnxruntime-node
 * computes in it aborts the whole process. So a run whose execution is cancelled or times out
 * rejects at once and its result is dropped, and its worker is retired: no new load or run goes to
 * it (the next one starts a new worker and loads its models there), the runs already in it (other
 * executions' too) finish and are answered, and it ends once no request is in flight. The stopped
 * inference keeps its CPU until it finishes, however long its model computes (a `Loop` with a
 * huge trip count: hours; runs queued behind it in that worker wait). At most
 * MAX_RETIRED_WORKERS retired workers are alive at once: beyond that a stop only drops its result,
 * and later runs keep going to the current worker. close() waits for inferences at most
 * CLOSE_DEADLINE_MS. A worker that dies (an uncaught error, out of memory) fails what it had, and
 * the next load starts a new one.
 *
 * A model whose tensors name external data files is refused before the worker sees it, and the
 * worker points the runtime's external data at an empty directory of this instance, in case a
 * model ever gets past that check (onnx-external-data.ts, onnx-worker-source.ts).
 */

/** Reads a blob of the organization; undefined when absent. */
export interface ModelBlobs {
  read(key: string, maxBytes: number): Promise<Uint8Array | undefined>;
}

export interface OnnxModelsOptions {
  blobs?: ModelBlobs;
  /** WEFT_ONNX_MODEL_MAX_BYTES. */
  maxModelBytes: number;
  /** WEFT_ONNX_MAX_CACHED_MODELS. */
  maxCachedModels: number;
  /** WEFT_ONNX_MAX_OUTPUT_VALUES: checked in the worker before outputs become JS arrays. */
  maxOutputValues: number;
  /** The runtime package (tests name a missing one). */
  runtimeModule?: string;
}

export interface LoadedModel {
  key: string;
  inputNames: string[];
  outputNames: string[];
}

export type TensorOutputs = Record<string, { data: unknown[]; dims: number[] }>;

export const ONNX_INSTALL_HINT =
  'install onnxruntime-node (ONNXRUNTIME_NODE_INSTALL=skip pnpm add onnxruntime-node; its CPU binaries ship in the package)';

const DATA_URL = /^data:[^,;]*(?:;[^,;]*)*;base64,/;

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** A worker thread and the requests it has not answered. */
interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** No request is sent to it any more: it ends when `pending` is empty (or it crashed). */
  retired: boolean;
  /** Settles once the thread has exited and its empty directory is removed. */
  ended: Promise<void>;
}

/** Retired workers (still finishing runs) alive at once: stops beyond it retire none. */
export const MAX_RETIRED_WORKERS = 2;

/** How long close() waits for inferences still computing before it gives up on them. */
const CLOSE_DEADLINE_MS = 10_000;

/**
 * The run must be tried again with the model loaded anew: the model was evicted before the run
 * reached the worker, or the run went to a new worker (the one it was loaded in was retired).
 */
export class OnnxWorkerRestarted extends Error {
  override name = 'OnnxWorkerRestarted';
}

export class OnnxModels {
  /** The worker new loads and runs go to, and that worker once started. */
  private worker: Promise<Thread> | undefined;
  private current: Thread | undefined;
  /** close() was called: no worker starts any more. */
  private closed = false;
  /** Workers retired to stop a run, alive until their runs in flight are answered. */
  private readonly retired = new Set<Thread>();
  private nextId = 0;
  /** Loaded models by key, least recently used first. */
  private readonly loaded = new Map<string, Promise<LoadedModel>>();
  /** The key of each model downloaded from a URL, by organization and URL. */
  private readonly downloaded = new Map<string, string>();
  /** Workers retired to stop a run, and runs sent and not answered yet (tests observe both). */
  stoppedWorkers = 0;
  runsInFlight = 0;

  constructor(private readonly options: OnnxModelsOptions) {}

  /** The model, loaded now or reused. */
  async load(
    organizationId: string,
    model: FileReference | string,
    download?: (url: URL, maxBytes: number) => Promise<Uint8Array>,
  ): Promise<LoadedModel> {
    // A missing runtime fails before the model is read.
    await this.currentThread();
    const target = typeof model === 'string' ? model : model.url;
    // A model taken from a URL is downloaded once per engine; its loaded session is then reused.
    const remote = /^https?:\/\//i.test(target) ? `${organizationId}\u0000${target}` : undefined;
    const known = remote === undefined ? undefined : this.downloaded.get(remote);
    const cached = known === undefined ? undefined : this.loaded.get(known);
    if (cached) {
      this.loaded.delete(known as string);
      this.loaded.set(known as string, cached);
      return cached;
    }
    const bytes = remote ? await this.downloadOf(target, download) : await this.bytesOf(organizationId, model);
    refuseExternalData(bytes);
    const key = createHash('sha256').update(bytes).digest('hex');
    if (remote) this.downloaded.set(remote, key);
    // The worker now (another may have been started while the bytes were read): the evictions and
    // the load below go to it, in this order, with no wait between.
    const thread = await this.currentThread();
    let loaded = this.loaded.get(key);
    if (loaded) {
      this.loaded.delete(key);
    } else {
      this.evictBeyond(this.options.maxCachedModels - 1, thread);
      loaded = (this.request(thread, { op: 'load', key, bytes }) as Promise<Omit<LoadedModel, 'key'>>).then(
        (names) => ({ key, ...names }),
        (error: Error) => {
          // Only this load's entry: the model may have been evicted and loaded again meanwhile.
          if (this.loaded.get(key) === loaded) this.loaded.delete(key);
          if (error instanceof OnnxWorkerRestarted) throw error;
          throw new NodeFailure(`the model could not be loaded: ${error.message}`);
        },
      );
    }
    this.loaded.set(key, loaded);
    return loaded;
  }

  /**
   * Runs the model. When `signal` aborts first, the run rejects at once with the reason and its
   * result is dropped when it comes; its worker is retired (see the file comment).
   */
  async run(model: LoadedModel, feeds: Record<string, TensorInput>, signal?: AbortSignal): Promise<TensorOutputs> {
    signal?.throwIfAborted();
    const thread = await this.currentThread();
    signal?.throwIfAborted();
    const answer = this.request(thread, { op: 'run', key: model.key, feeds });
    this.runsInFlight += 1;
    const answered = (): void => void (this.runsInFlight -= 1);
    answer.then(answered, answered);
    let onAbort: (() => void) | undefined;
    const stopped = new Promise<never>((_, reject) => {
      if (!signal) return;
      onAbort = () => {
        reject(signal.reason as Error);
        this.retire(thread);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return (await Promise.race([answer, stopped])) as TensorOutputs;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof OnnxWorkerRestarted) throw error;
      throw new NodeFailure(`the model failed: ${(error as Error).message}`);
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Sends no more requests to `thread` (if it is still the current worker and fewer than
   * MAX_RETIRED_WORKERS are retired already): the next load or run starts a new worker and loads
   * its models there. The thread ends once its requests in flight are answered.
   */
  private retire(thread: Thread): void {
    if (thread.retired || this.retired.size >= MAX_RETIRED_WORKERS) return;
    thread.retired = true;
    this.retired.add(thread);
    this.worker = undefined;
    if (this.current === thread) this.current = undefined;
    this.stoppedWorkers += 1;
    this.loaded.clear();
    this.downloaded.clear();
    this.endIfIdle(thread);
  }

  /** A retired thread with no request in flight ends: no native call runs in it (ending one mid-run aborts the process). */
  private endIfIdle(thread: Thread): void {
    if (thread.retired && thread.pending.size === 0) void thread.worker.terminate();
  }

  get cachedModels(): number {
    return this.loaded.size;
  }

  /** Retired workers still finishing their runs (tests). */
  get retiredWorkers(): number {
    return this.retired.size;
  }

  /** The worker's sessions now: the keys it holds and how many sessions it created and did not release (tests). */
  async workerSessions(): Promise<{ keys: string[]; live: number }> {
    return (await this.request(await this.currentThread(), { op: 'sessions' })) as { keys: string[]; live: number };
  }

  /**
   * Retires the current worker and waits for every worker to end (after the runs in flight in it),
   * at most CLOSE_DEADLINE_MS: an inference can compute for as long as its model makes it.
   */
  async close(): Promise<void> {
    this.closed = true;
    const current = await this.worker?.catch(() => undefined);
    this.worker = undefined;
    this.current = undefined;
    this.loaded.clear();
    this.downloaded.clear();
    const threads = [...this.retired];
    if (current && !current.retired) {
      current.retired = true;
      threads.push(current);
      this.endIfIdle(current);
    }
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(threads.map((thread) => thread.ended)),
      new Promise<void>((resolve) => (deadline = setTimeout(resolve, CLOSE_DEADLINE_MS))),
    ]);
    clearTimeout(deadline);
  }

  /**
   * Releases the least recently used models beyond `keep`. The release is sent at once, to the
   * worker the next load goes to: the worker then sees it before any later load of the same model
   * (which gets a new session) and after an earlier one still loading (which it waits for).
   */
  private evictBeyond(keep: number, thread: Thread): void {
    while (this.loaded.size > keep) {
      const oldest = this.loaded.keys().next().value as string;
      this.loaded.delete(oldest);
      for (const [url, key] of this.downloaded) if (key === oldest) this.downloaded.delete(url);
      // Runs in progress finish first (the worker releases the session after them); a run sent
      // later is answered `evicted`, and its node loads the model again.
      this.request(thread, { op: 'release', key: oldest }).catch(() => undefined);
    }
  }

  /**
   * The current worker, started on first use or after the last one was retired; a missing runtime
   * fails every ONNX node with what to install.
   */
  private async started(): Promise<Thread> {
    for (;;) {
      if (this.closed) throw new NodeFailure('the engine is stopping: ONNX models no longer run here');
      this.worker ??= this.startWorker().catch((error: unknown) => {
        this.worker = undefined;
        throw error;
      });
      const starting = this.worker;
      const thread = await starting;
      if (!thread.retired) return thread;
      // Retired (or crashed) while this call waited: the next turn starts a new worker.
      if (this.worker === starting) this.worker = undefined;
    }
  }

  /**
   * The current worker, checked again when this call resumes: a stop dispatched between started()
   * and the caller may have retired it, and a request sent to it would fail another's run.
   * Callers send their requests synchronously after this resolves.
   */
  private async currentThread(): Promise<Thread> {
    for (;;) {
      const thread = await this.started();
      if (!thread.retired) return thread;
    }
  }

  private async startWorker(): Promise<Thread> {
    let runtimePath: string;
    try {
      runtimePath = createRequire(import.meta.url).resolve(this.options.runtimeModule ?? 'onnxruntime-node');
    } catch {
      throw new NodeFailure(`the ONNX runtime is not installed on this engine: ${ONNX_INSTALL_HINT}`);
    }
    // Each worker's own empty directory (mode 0700), removed when the worker ends.
    const emptyDir = mkdtempSync(join(tmpdir(), 'weft-onnx-no-external-data-'));
    let worker: Worker;
    try {
      worker = new Worker(ONNX_WORKER_SOURCE, {
        eval: true,
        workerData: { runtimePath, maxOutputValues: this.options.maxOutputValues, emptyDir },
      });
    } catch (error) {
      await rm(emptyDir, { recursive: true, force: true });
      throw error;
    }
    worker.unref();
    let ended!: () => void;
    const thread: Thread = {
      worker,
      pending: new Map(),
      retired: false,
      ended: new Promise<void>((resolve) => (ended = resolve)),
    };
    // A worker ends when retired and idle, or when it crashed: what it still had fails (the next
    // node starts a new one), and its empty directory goes.
    worker.once('exit', () => {
      thread.retired = true;
      // The current worker crashed: its models go with it (the next node starts a new one).
      if (this.current === thread) {
        this.current = undefined;
        this.worker = undefined;
        this.loaded.clear();
        this.downloaded.clear();
      }
      this.retired.delete(thread);
      for (const [id, waiting] of thread.pending) {
        thread.pending.delete(id);
        waiting.reject(new Error('the ONNX worker stopped'));
      }
      void rm(emptyDir, { recursive: true, force: true })
        .catch(() => undefined)
        .then(ended);
    });
    // An error thrown in the worker after it started (out of memory, say) must not end the
    // engine: the worker then exits, and the exit above fails what it still had.
    worker.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error): void => {
        thread.retired = true;
        void worker.terminate();
        reject(error);
      };
      const stoppedStarting = (): void =>
        reject(new NodeFailure(`the ONNX worker stopped while starting: ${ONNX_INSTALL_HINT}`));
      worker.once('message', (message: { ready?: boolean; fatal?: boolean; message?: string }) => {
        // Started: the start-up listeners go (a later error must not mark it retired behind the back of the exit handler).
        worker.off('error', failed).off('exit', stoppedStarting);
        if (message.ready) return resolve();
        failed(new NodeFailure(`the ONNX runtime could not be loaded (${message.message}): ${ONNX_INSTALL_HINT}`));
      });
      worker.once('error', failed);
      worker.once('exit', stoppedStarting);
    });
    worker.on('message', (message: { id?: number; result?: unknown; error?: string; evicted?: boolean }) => {
      const waiting = message.id === undefined ? undefined : thread.pending.get(message.id);
      if (!waiting) return;
      thread.pending.delete(message.id as number);
      if (thread.pending.size === 0) worker.unref();
      // Evicted between the node's load and its run (other models were loaded meanwhile): load again.
      if (message.evicted) waiting.reject(new OnnxWorkerRestarted('the model was evicted before it ran'));
      else if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
      this.endIfIdle(thread);
    });
    if (!thread.retired) this.current = thread;
    return thread;
  }

  private request(thread: Thread, message: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.ref();
      thread.worker.postMessage({ ...message, id });
    });
  }

  private async downloadOf(
    target: string,
    download: ((url: URL, maxBytes: number) => Promise<Uint8Array>) | undefined,
  ): Promise<Uint8Array> {
    if (!download) throw new NodeFailure(`model URL "${target}" cannot be fetched here`);
    return download(new URL(target), this.options.maxModelBytes);
  }

  private async bytesOf(organizationId: string, model: FileReference | string): Promise<Uint8Array> {
    const target = typeof model === 'string' ? model : model.url;
    const max = this.options.maxModelBytes;
    if (DATA_URL.test(target)) {
      const encoded = target.slice(target.indexOf(',') + 1);
      if (Math.floor((encoded.length * 3) / 4) > max) throw tooLarge(max);
      return Buffer.from(encoded, 'base64');
    }
    let key: string;
    try {
      key = blobKeyOf(target);
    } catch {
      throw new NodeFailure(`model file "${target}" not found`);
    }
    // Blob keys carry their organization first, as the gateway's file routes check.
    if (!key.startsWith(`${organizationId}/`) || !this.options.blobs) {
      throw new NodeFailure(`model file "${target}" not found`);
    }
    const bytes = await this.options.blobs.read(key, max);
    if (!bytes) throw new NodeFailure(`model file "${target}" not found`);
    return bytes;
  }
}

/** A model whose tensors name files would make the runtime read them from the engine's disk. */
function refuseExternalData(bytes: Uint8Array): void {
  let external: boolean;
  try {
    external = usesExternalData(bytes);
  } catch (error) {
    if (error instanceof OnnxModelFormatError) throw new NodeFailure(`the model could not be loaded: ${error.message}`);
    throw error;
  }
  if (external)
    throw new NodeFailure(
      'the model keeps tensor data in external files, which Weft does not load: save it with every tensor inside ' +
        'the model (onnx.save(model, path, save_as_external_data=False))',
    );
}

const tooLarge = (max: number): NodeFailure =>
  new NodeFailure(`the model is larger than ${max} bytes (WEFT_ONNX_MODEL_MAX_BYTES)`);

/** Model bytes from the engine's blob storage, refusing (before reading) one larger than the cap. */
export const blobStorageModels = (storage: BlobStorage): ModelBlobs => ({
  async read(key, maxBytes) {
    const found = await storage.stat(key);
    if (!found) return undefined;
    if (found.size > maxBytes) throw tooLarge(maxBytes);
    return storage.getBuffer(key);
  },
});
