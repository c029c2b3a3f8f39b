import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
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
 * Native inference cannot be interrupted, so a run whose execution is cancelled or times out
 * ends the worker thread: the CPU it held is freed at once. Runs of other executions in that
 * worker fail with `OnnxWorkerRestarted`, and the node loads its model again and retries.
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

/**
 * The run must be tried again with the model loaded anew: the worker ended while the request was
 * in it (another execution's run was stopped), or the model was evicted before the run reached it.
 */
export class OnnxWorkerRestarted extends Error {
  override name = 'OnnxWorkerRestarted';
}

export class OnnxModels {
  private worker: Promise<Worker> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** Loaded models by key, least recently used first. */
  private readonly loaded = new Map<string, Promise<LoadedModel>>();
  /** The key of each model downloaded from a URL, by organization and URL. */
  private readonly downloaded = new Map<string, string>();
  /** The empty directory the runtime resolves external data files in (created with the first worker). */
  private emptyDir: string | undefined;
  /** Worker threads ended to stop a run, and runs sent and not answered yet (tests observe both). */
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
    await this.started();
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
    // The worker now (it may have been restarted while the bytes were read): the evictions and the
    // load below go to it, in this order, with no wait between.
    const worker = await this.started();
    let loaded = this.loaded.get(key);
    if (loaded) {
      this.loaded.delete(key);
    } else {
      this.evictBeyond(this.options.maxCachedModels - 1, worker);
      loaded = (this.request(worker, { op: 'load', key, bytes }) as Promise<Omit<LoadedModel, 'key'>>).then(
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

  /** Runs the model; when `signal` aborts first, the worker is ended and the run rejects with the reason. */
  async run(model: LoadedModel, feeds: Record<string, TensorInput>, signal?: AbortSignal): Promise<TensorOutputs> {
    const worker = await this.started();
    signal?.throwIfAborted();
    const stop = (): void => void this.stopWorker(worker, signal?.reason);
    signal?.addEventListener('abort', stop, { once: true });
    this.runsInFlight += 1;
    try {
      return (await this.request(worker, { op: 'run', key: model.key, feeds })) as TensorOutputs;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof OnnxWorkerRestarted) throw error;
      throw new NodeFailure(`the model failed: ${(error as Error).message}`);
    } finally {
      this.runsInFlight -= 1;
      signal?.removeEventListener('abort', stop);
    }
  }

  /** Ends `worker` (if still the current one): its pending run for `reason`, the others to be retried. */
  private async stopWorker(worker: Worker, reason: unknown): Promise<void> {
    const current = await this.worker?.catch(() => undefined);
    if (current !== worker) return;
    this.worker = undefined;
    this.stoppedWorkers += 1;
    this.failPending(
      () =>
        new OnnxWorkerRestarted(
          `the ONNX worker was restarted to stop another run (${String((reason as Error)?.message ?? reason)})`,
        ),
    );
    await worker.terminate();
  }

  private failPending(error: () => Error): void {
    this.loaded.clear();
    this.downloaded.clear();
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.reject(error());
    }
  }

  get cachedModels(): number {
    return this.loaded.size;
  }

  /** The worker's sessions now: the keys it holds and how many sessions it created and did not release (tests). */
  async workerSessions(): Promise<{ keys: string[]; live: number }> {
    return (await this.request(await this.started(), { op: 'sessions' })) as { keys: string[]; live: number };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    const emptyDir = this.emptyDir;
    this.worker = undefined;
    this.emptyDir = undefined;
    this.loaded.clear();
    this.downloaded.clear();
    if (worker) await (await worker.catch(() => undefined))?.terminate();
    if (emptyDir) await rm(emptyDir, { recursive: true, force: true });
  }

  /**
   * Releases the least recently used models beyond `keep`. The release is sent at once, to the
   * worker the next load goes to: the worker then sees it before any later load of the same model
   * (which gets a new session) and after an earlier one still loading (which it waits for).
   */
  private evictBeyond(keep: number, worker: Worker): void {
    while (this.loaded.size > keep) {
      const oldest = this.loaded.keys().next().value as string;
      this.loaded.delete(oldest);
      for (const [url, key] of this.downloaded) if (key === oldest) this.downloaded.delete(url);
      // Runs in progress finish first (the worker releases the session after them); a run sent
      // later is answered `evicted`, and its node loads the model again.
      this.request(worker, { op: 'release', key: oldest }).catch(() => undefined);
    }
  }

  /** The worker, started on first use; a missing runtime fails every ONNX node with what to install. */
  private started(): Promise<Worker> {
    this.worker ??= this.startWorker().catch((error: unknown) => {
      this.worker = undefined;
      throw error;
    });
    return this.worker;
  }

  private async startWorker(): Promise<Worker> {
    let runtimePath: string;
    try {
      runtimePath = createRequire(import.meta.url).resolve(this.options.runtimeModule ?? 'onnxruntime-node');
    } catch {
      throw new NodeFailure(`the ONNX runtime is not installed on this engine: ${ONNX_INSTALL_HINT}`);
    }
    const worker = new Worker(ONNX_WORKER_SOURCE, {
      eval: true,
      workerData: { runtimePath, maxOutputValues: this.options.maxOutputValues, emptyDir: this.emptyDirectory() },
    });
    worker.unref();
    await new Promise<void>((resolve, reject) => {
      worker.once('message', (message: { ready?: boolean; fatal?: boolean; message?: string }) => {
        if (message.ready) return resolve();
        void worker.terminate();
        reject(new NodeFailure(`the ONNX runtime could not be loaded (${message.message}): ${ONNX_INSTALL_HINT}`));
      });
      worker.once('error', reject);
    });
    worker.on('message', (message: { id?: number; result?: unknown; error?: string; evicted?: boolean }) => {
      const waiting = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id as number);
      // Evicted between the node's load and its run (other models were loaded meanwhile): load again.
      if (message.evicted) waiting.reject(new OnnxWorkerRestarted('the model was evicted before it ran'));
      else if (message.error !== undefined) waiting.reject(new Error(message.error));
      else waiting.resolve(message.result);
    });
    // A crashed worker fails what it was running; the next node starts a new one. (A worker
    // ended by stopWorker was replaced already, and its requests failed there.)
    worker.on('exit', () => {
      void this.worker?.then((current) => {
        if (current !== worker) return;
        this.worker = undefined;
        this.failPending(() => new Error('the ONNX worker stopped'));
      });
    });
    return worker;
  }

  /** This instance's empty directory (mode 0700), made again if it went missing or got any entry. */
  private emptyDirectory(): string {
    if (this.emptyDir === undefined || !isEmptyDirectory(this.emptyDir)) {
      this.emptyDir = mkdtempSync(join(tmpdir(), 'weft-onnx-no-external-data-'));
    }
    return this.emptyDir;
  }

  private request(worker: Worker, message: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...message, id });
    }).finally(() => {
      if (this.pending.size === 0) worker.unref();
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

function isEmptyDirectory(path: string): boolean {
  try {
    return readdirSync(path).length === 0;
  } catch {
    return false;
  }
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
