import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { AbortableSemaphore } from './abortable-semaphore.js';
import { JSONATA_PROCESS_SOURCE } from './jsonata-process-source.js';

/**
 * JSONata expressions from tenants, evaluated in a small pool of child processes, one evaluation
 * per process at a time. jsonata checks its own time limit only between evaluation steps, and one
 * step (a range, a string join) can build a value large enough to exhaust a heap; so each process
 * has its own heap limit (WEFT_JSONATA_MAX_MEMORY_MB) and a hard timeout, and one that runs out of
 * memory, overstays or is cancelled is killed and replaced. Processes rather than worker threads:
 * a worker's resourceLimits do not hold for one large allocation (pushing onto one huge array
 * aborts the whole process, nodejs/node#47224), a process's heap limit does. The engine's heap and
 * event loop never see an evaluation, only its result. Processes start on first use and are reused;
 * they get no environment (no secret of the engine's reaches them).
 */
export interface JsonataLimits {
  /** WEFT_JSONATA_WORKERS: evaluations at once per engine; more wait for a free process. */
  workers: number;
  /** WEFT_JSONATA_MAX_MEMORY_MB: each process's heap (old generation) limit. */
  maxMemoryMb: number;
}

export const JSONATA_INSTALL_HINT = 'install jsonata (pnpm add jsonata)';

const MAX_PARSED_PER_PROCESS = 200;
const MAX_STACK = 500;
/** jsonata's own timeout answers first (cleanly, keeping the process); this is the backstop. */
const HARD_TIMEOUT_GRACE_MS = 1000;
/** The end of a process's stderr kept to tell a heap exhaustion from another crash. */
const STDERR_TAIL_CHARS = 4096;

type JsonataError = { code?: string; message?: string; position?: number; parse?: boolean };
type Answer = { id?: number; json?: string; error?: JsonataError; ready?: boolean; fatal?: boolean; message?: string };

/** One evaluation process and the end of what it wrote to stderr. */
interface Evaluator {
  child: ChildProcess;
  stderr: string;
}

export class JsonataMappings {
  private readonly idle: Evaluator[] = [];
  private readonly live = new Set<Evaluator>();
  private readonly slots: AbortableSemaphore;
  private nextId = 0;

  constructor(
    private readonly limits: JsonataLimits,
    /** The jsonata package (tests name a missing one). */
    private readonly runtimeModule = 'jsonata',
  ) {
    this.slots = new AbortableSemaphore(limits.workers);
  }

  /** Evaluates `expression` over `input`; `undefined` results become null. `what` names it in errors. */
  async evaluate(
    what: string,
    expression: string,
    input: unknown,
    timeoutMs: number,
    signal: AbortSignal,
    /** The organization: processes are taken in turn by organization. */
    owner: string,
  ): Promise<unknown> {
    await this.slots.acquire(signal, owner);
    let evaluator: Evaluator;
    try {
      evaluator = this.idle.pop() ?? (await this.start());
    } catch (error) {
      this.release(undefined);
      throw error;
    }
    // Stopped while the slot was granted or the process started: the 'abort' is already past,
    // so runOn's listener would never hear it; the mapping must not run.
    if (signal.aborted) {
      this.release(evaluator);
      throw signal.reason as Error;
    }
    return this.runOn(evaluator, what, { expression, input, timeoutMs }, signal);
  }

  /** Kills every process and waits until they are gone. */
  async close(): Promise<void> {
    const evaluators = [...this.live];
    const exited = evaluators.map(({ child }) =>
      child.exitCode === null && child.signalCode === null
        ? new Promise<void>((resolve) => child.once('exit', () => resolve()))
        : Promise.resolve(),
    );
    for (const evaluator of evaluators) {
      // An idle process is unref'd: without this the engine could exit before seeing it go.
      ref(evaluator.child, true);
      this.discard(evaluator);
    }
    await Promise.all(exited);
  }

  private runOn(
    evaluator: Evaluator,
    what: string,
    job: { expression: string; input: unknown; timeoutMs: number },
    signal: AbortSignal,
  ): Promise<unknown> {
    const { child } = evaluator;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const finish = (keep: boolean, settle: () => void): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        child.off('message', onMessage).off('close', onClose);
        if (!keep) this.discard(evaluator);
        this.release(keep ? evaluator : undefined);
        settle();
      };
      const onMessage = (answer: Answer): void => {
        if (answer.id !== id) return;
        finish(true, () =>
          answer.error ? reject(failureOf(what, answer.error, job.timeoutMs)) : resolve(JSON.parse(answer.json!)),
        );
      };
      // 'close' comes after stderr is read to its end: V8's out-of-memory report is in it.
      const onClose = (code: number | null, exitSignal: string | null): void =>
        finish(false, () =>
          reject(
            new NodeFailure(
              heapExhausted(evaluator.stderr)
                ? `${what}: exceeded the memory limit of ${this.limits.maxMemoryMb} MB (WEFT_JSONATA_MAX_MEMORY_MB)`
                : `${what}: the JSONata process stopped (${exitSignal ?? `exit code ${code}`})`,
            ),
          ),
        );
      const onAbort = (): void => finish(false, () => reject(signal.reason as Error));
      const timer = setTimeout(
        () => finish(false, () => reject(new NodeFailure(`${what}: timed out after ${job.timeoutMs} ms`))),
        job.timeoutMs + HARD_TIMEOUT_GRACE_MS,
      );
      child.on('message', onMessage).on('close', onClose);
      signal.addEventListener('abort', onAbort, { once: true });
      ref(child, true);
      child.send({ id, ...job }, (error) => {
        if (error)
          finish(false, () => reject(new NodeFailure(`${what}: the input could not be sent: ${error.message}`)));
      });
    });
  }

  /** A new process, ready to evaluate; a missing jsonata fails every mapping with what to install. */
  private async start(): Promise<Evaluator> {
    let runtimePath: string;
    try {
      runtimePath = createRequire(import.meta.url).resolve(this.runtimeModule);
    } catch {
      throw new NodeFailure(`JSONata is not available on this engine: ${JSONATA_INSTALL_HINT}`);
    }
    const child = spawn(
      process.execPath,
      [
        `--max-old-space-size=${this.limits.maxMemoryMb}`,
        '--enable-experimental-regexp-engine',
        '-e',
        JSONATA_PROCESS_SOURCE,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        env: {
          WEFT_JSONATA_RUNTIME: runtimePath,
          WEFT_JSONATA_MAX_STACK: String(MAX_STACK),
          WEFT_JSONATA_MAX_PARSED: String(MAX_PARSED_PER_PROCESS),
        },
      },
    );
    const evaluator: Evaluator = { child, stderr: '' };
    this.live.add(evaluator);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      evaluator.stderr = (evaluator.stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // A failure is reported by the evaluation the process was running; an idle one just leaves the pool.
    child.on('error', () => undefined);
    child.on('exit', () => this.discard(evaluator));
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('message', (message: Answer) =>
          message.ready
            ? resolve()
            : reject(new NodeFailure(`JSONata could not be loaded (${message.message}): ${JSONATA_INSTALL_HINT}`)),
        );
        child.once('exit', (code, exitSignal) =>
          reject(new NodeFailure(`the JSONata process stopped while starting (${exitSignal ?? `exit code ${code}`})`)),
        );
      });
    } catch (error) {
      this.discard(evaluator);
      throw error;
    }
    return evaluator;
  }

  private discard(evaluator: Evaluator): void {
    if (!this.live.delete(evaluator)) return;
    const index = this.idle.indexOf(evaluator);
    if (index >= 0) this.idle.splice(index, 1);
    evaluator.child.kill('SIGKILL');
  }

  /** Frees a slot; a healthy process goes back to the pool (idle ones do not keep the engine alive). */
  private release(evaluator: Evaluator | undefined): void {
    if (evaluator && this.live.has(evaluator)) {
      ref(evaluator.child, false);
      this.idle.push(evaluator);
    }
    this.slots.release();
  }
}

/** Whether the process, its IPC channel and its stderr pipe keep the engine's event loop alive. */
function ref(child: ChildProcess, on: boolean): void {
  const channel = child.channel as { ref(): void; unref(): void } | null | undefined;
  const stderr = child.stderr as unknown as { ref?(): void; unref?(): void } | null;
  if (on) {
    child.ref();
    channel?.ref();
    stderr?.ref?.();
  } else {
    child.unref();
    channel?.unref();
    stderr?.unref?.();
  }
}

/** V8's last words when a heap limit is reached ("Reached heap limit", "Allocation failed"). */
const heapExhausted = (stderr: string): boolean =>
  /heap out of memory|Allocation failed|Reached heap limit/.test(stderr);

function failureOf(what: string, error: JsonataError, timeoutMs: number): NodeFailure {
  if (error.parse) return new NodeFailure(`${what}: invalid JSONata: ${describe(error)}`);
  if (error.code === 'D1012') return new NodeFailure(`${what}: timed out after ${timeoutMs} ms`);
  if (error.code === 'D1011') return new NodeFailure(`${what}: recursion deeper than ${MAX_STACK}`);
  return new NodeFailure(`${what}: ${describe(error)}`);
}

const describe = (error: JsonataError): string =>
  `${error.message ?? 'failed'}${error.code ? ` (${error.code}${error.position !== undefined ? ` at ${error.position}` : ''})` : ''}`;
