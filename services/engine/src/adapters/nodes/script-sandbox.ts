import { BagLettingGo } from '@weft/collections';
import type ivm from 'isolated-vm';
import { createFrozenRealm, OVERSIZE_MARK, type FrozenRealm } from './frozen-realm.js';
import { ScriptError } from './script-error.js';
import { AbortableSemaphore } from './abortable-semaphore.js';
import {
  DEFAULT_ISOLATE_LIMITS,
  IsolatePool,
  type ExecutingRun,
  type IsolateLimits,
  type WarmIsolate,
} from './script-isolate-pool.js';

/** Why a run's wait for its turn ends when the run settled (see `run`). */
const RUN_SETTLED = Symbol('run settled');

export { ScriptError };

/**
 * JavaScript sandboxes on isolated-vm. One warm isolate per organization, within the engine's
 * isolate and memory limits (IsolatePool), so a runaway script hurts only its own organization;
 * in it one frozen realm (FrozenRealm: nothing a run does or holds reaches a later run), and
 * compiled scripts cached per isolate. The realm has no require, fs, process, timers or network:
 * only `input` and the language itself.
 */

export interface ScriptRun {
  organizationId: string;
  code: string;
  input: unknown;
  timeoutMs: number;
  memoryMb: number;
  signal?: AbortSignal;
}

/** A timer of the sandbox; `unref` lets a background check not hold the process open. */
export interface SandboxTimer {
  unref(): unknown;
}

/**
 * The sandbox's clock and timers. Injectable because its stops race: the spin check (25 ms) must
 * beat the guard (timeout + 50 ms) for the isolate-reset message, so tests fire them in order.
 */
export interface SandboxTimers {
  now(): number;
  setTimeout(callback: () => void, ms: number): SandboxTimer;
  clearTimeout(timer: SandboxTimer): void;
}

const realTimers: SandboxTimers = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

const MAX_CACHED_SCRIPTS = 500;
/** What isolated-vm says when it stops code (7.0.1). */
const ISOLATED_VM_MEMORY_LIMIT = 'Isolate was disposed during execution due to memory limit';
const ISOLATED_VM_TIMEOUT = 'Script execution timed out.';
const SPIN_CHECK_MS = 25;
/** Default largest script result, as JSON text (WEFT_SCRIPT_OUTPUT_MAX_BYTES): it is stored in the execution's events. */
export const MAX_SCRIPT_OUTPUT_CHARS = 16 * 1024 * 1024;

/**
 * An error's message, whichever realm made it: isolated-vm builds the errors it hands over in the
 * process's main realm, which is not the realm of code loaded through node:vm (as tests are).
 */
const messageOf = (error: unknown): string => {
  const message = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(error);
};

/** The realm checks the size before the result leaves it; checked again here, before parsing. */
const parseOutput = (text: unknown, maxChars: number): unknown => {
  if (typeof text !== 'string') throw new ScriptError('script result is not JSON');
  if (text.length > maxChars) throw new Error(`${OVERSIZE_MARK} (${text.length} characters)`);
  return JSON.parse(text) as unknown;
};

export class ScriptSandbox {
  private readonly pool: IsolatePool;
  /**
   * Turns per organization: at most `runsPerIsolate` of its runs set up (compile, input) on its
   * isolate at once; a run gives its turn back once its code is queued there. With a fresh context
   * per run (before docs/decisions/0006), fifty runs setting up at once on the isolate's one thread
   * cost almost twice the CPU per run of four at a time (more contexts alive for its GC, more
   * hand-offs between threads), for fewer runs per second. The code itself holds no turn, so one
   * awaiting a promise that never settles blocks no one. Dropped when no run holds or waits for one.
   */
  private readonly turns = new Map<string, AbortableSemaphore>();
  private readonly runsPerIsolate: number;
  /** Aborted by `dispose`: runs waiting for a turn give up instead of starting on a new isolate. */
  private readonly closing = new AbortController();
  /**
   * The turn signal of each run that waits for or asks for a turn, aborted by `dispose` too. Not
   * `AbortSignal.any([turnWanted, closing])`: that leaves a WeakRef to each run's signal on the
   * long-lived `closing`, and V8's young-generation collections keep a WeakRef's target alive, so
   * every script run's signal, its listeners and the run state they hold were promoted to the old
   * generation (about 7 KiB per script run) and collected only by a full mark-compact. In a
   * BagLettingGo, not a Set, for the same reason: a Set's discarded hash tables would keep
   * the controllers, and through their listeners the runs, alive until then.
   */
  private readonly turnWanters = new BagLettingGo<AbortController>();
  private readonly maxOutputChars: number;
  private readonly timers: SandboxTimers;

  constructor(options: { maxOutputChars?: number; isolates?: Partial<IsolateLimits>; timers?: SandboxTimers } = {}) {
    this.maxOutputChars = options.maxOutputChars ?? MAX_SCRIPT_OUTPUT_CHARS;
    this.timers = options.timers ?? realTimers;
    this.pool = new IsolatePool(options.isolates);
    this.runsPerIsolate = options.isolates?.runsPerIsolate ?? DEFAULT_ISOLATE_LIMITS.runsPerIsolate;
  }

  /** Organizations with a warm isolate, least recently used first. */
  warmOrganizations(): string[] {
    return this.pool.warmOrganizations();
  }

  /** The heap limits of every live isolate, added up (WEFT_SCRIPT_MEMORY_BUDGET_MB bounds it). */
  get liveMemoryMb(): number {
    return this.pool.liveMemoryMb;
  }

  /** Runs waiting for their organization's turn to set up (tests watch it). */
  get runsWaitingForTurn(): number {
    let waiting = 0;
    for (const turns of this.turns.values()) waiting += turns.queued;
    return waiting;
  }

  /** Organizations with a run holding or waiting for a turn (their turn counters are dropped after). */
  get organizationsTakingTurns(): number {
    return this.turns.size;
  }

  /** Runs whose code is on an isolate now. */
  get runningScripts(): number {
    return this.pool.runningScripts;
  }

  async run({ organizationId, code, input, timeoutMs, memoryMb, signal }: ScriptRun): Promise<unknown> {
    let warm = this.pool.acquire(organizationId, memoryMb);
    const slot: ExecutingRun = { deadline: this.timers.now() + timeoutMs };
    let executing = false;
    let settled = false;
    let timer: SandboxTimer | undefined;
    let onAbort: (() => void) | undefined;
    // The organization's turn to set up (see `turns`): given back once the code is queued, or when
    // the run is settled before that; a run settled while it waits leaves the line.
    const turns = this.turnsOf(organizationId);
    const turnWanted = new AbortController();
    let turnHeld = false;
    const releaseTurn = (): void => {
      if (!turnHeld) return;
      turnHeld = false;
      turns.release();
      if (!turns.busy) this.turns.delete(organizationId);
    };
    const stopped = (reason: ScriptError, reject: (error: ScriptError) => void): void => {
      reject(reason);
      // Code this run started may still spin on the isolate's thread; a run still queued holds nothing.
      const on = warm;
      if (!executing) return;
      // The runs on the isolate now may be what spins; those that come later are not.
      const suspects = new Set([...on.executing].filter((run) => run !== slot));
      this.timers.setTimeout(() => this.discardIfSpinning(on, suspects), 0).unref();
    };
    // Armed before compiling: an isolate busy with a runaway would otherwise hold this run forever.
    const guard = new Promise<never>((_, reject) => {
      timer = this.timers.setTimeout(
        () => stopped(new ScriptError(`script timed out after ${timeoutMs} ms`), reject),
        timeoutMs + 50,
      );
      onAbort = () => stopped(new ScriptError('script cancelled'), reject);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    const running = (async () => {
      // A run started after dispose() has failed already, in pool.acquire; dispose() aborts this one.
      const wanter = this.turnWanters.add(turnWanted);
      try {
        await turns.acquire(turnWanted.signal, organizationId);
      } finally {
        this.turnWanters.delete(wanter);
      }
      turnHeld = true;
      if (settled) return void releaseTurn();
      for (let attempt = 0; ; attempt++) {
        try {
          const realm = await this.realmOf(warm);
          const script = await this.compile(warm, realm, code, Math.max(1, slot.deadline - this.timers.now()));
          if (settled) return undefined;
          executing = true;
          const on = warm;
          on.executing.add(slot);
          try {
            // The isolate's own timeout covers synchronous code, from when it starts: only what is
            // left of this run's time, so code that starts late still stops before the guard
            // (which would discard the isolate). The guard also covers code after an await.
            const result = realm.run(script, input, {
              timeoutMs: Math.max(1, slot.deadline - this.timers.now()),
              maxChars: this.maxOutputChars,
            });
            releaseTurn();
            return await result;
          } finally {
            on.executing.delete(slot);
          }
        } catch (error) {
          // Queued behind a runaway whose isolate was discarded: start again on a fresh one. Code
          // that reached the isolate after the runaway was stopped may have run in part; a script
          // has no effect outside its isolate, so running it again is safe.
          const requeued = slot.requeue === true;
          slot.requeue = false;
          if ((executing && !requeued) || settled || attempt > 0 || !warm.isolate.isDisposed) throw error;
          executing = false;
          this.pool.release(warm);
          warm = this.pool.acquire(organizationId, memoryMb);
        }
      }
    })();
    running.catch(() => undefined);
    try {
      return parseOutput(await Promise.race([running, guard]), this.maxOutputChars);
    } catch (error) {
      throw this.explain(error, warm, slot, timeoutMs, memoryMb);
    } finally {
      settled = true;
      // A reason of our own: abort() without one builds a DOMException with its stack, per run.
      turnWanted.abort(RUN_SETTLED);
      releaseTurn();
      warm.executing.delete(slot);
      if (timer) this.timers.clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      this.pool.release(warm);
    }
  }

  dispose(): void {
    this.closing.abort(new ScriptError('the script sandbox is closed (the engine is stopping)'));
    for (const wanted of this.turnWanters.values()) wanted.abort(this.closing.signal.reason);
    this.pool.disposeAll();
  }

  private turnsOf(organizationId: string): AbortableSemaphore {
    let turns = this.turns.get(organizationId);
    if (!turns) this.turns.set(organizationId, (turns = new AbortableSemaphore(this.runsPerIsolate)));
    return turns;
  }

  /** The isolate's frozen realm, made by its first run; a failed attempt is not kept. */
  private realmOf(warm: WarmIsolate): Promise<FrozenRealm> {
    warm.realm ??= createFrozenRealm(warm.isolate).catch((error: unknown) => {
      warm.realm = undefined;
      throw error;
    });
    return warm.realm;
  }

  /** Asynchronous: a synchronous compile would block the host's event loop while a runaway holds the isolate. */
  private compile(warm: WarmIsolate, realm: FrozenRealm, code: string, timeoutMs: number): Promise<ivm.Reference> {
    let script = warm.scripts.get(code);
    if (!script) {
      script = realm.compile(code, timeoutMs).catch((error: unknown) => {
        warm.scripts.delete(code);
        const message = messageOf(error);
        // A timeout or a lost isolate is the run's to explain; anything else is the code's own.
        if (warm.isolate.isDisposed || message === ISOLATED_VM_TIMEOUT) throw error;
        throw new ScriptError(`script does not compile: ${message}`);
      });
      if (warm.scripts.size >= MAX_CACHED_SCRIPTS) warm.scripts.clear();
      warm.scripts.set(code, script);
    }
    return script;
  }

  /**
   * A script stuck on a promise that never settles holds nothing; one spinning after an await
   * holds the isolate's thread, so the isolate goes. Discarding an idle one would kill the
   * organization's other runs for nothing. `suspects` are the runs that were on the isolate when
   * the stopped run stopped: any of them may be what burns the CPU, so the check waits until they
   * are all past their time. Runs that came later wait behind the spin (their code cannot start);
   * when the isolate goes they run again on a fresh one (a script has no effect outside it).
   * Known limit: a later run that holds the thread past the sample with legitimate work (more
   * than 25 ms of synchronous CPU) blocks the probe as a runaway would; the isolate is then reset
   * and that run started again on a fresh one, within what is left of its own timeout.
   */
  private discardIfSpinning(warm: WarmIsolate, suspects: ReadonlySet<ExecutingRun>): void {
    if (warm.isolate.isDisposed) return;
    const now = this.timers.now();
    const stillOn = [...suspects].filter((run) => warm.executing.has(run));
    const latest = Math.max(now, ...stillOn.map((run) => run.deadline));
    if (latest > now) {
      this.timers.setTimeout(() => this.discardIfSpinning(warm, suspects), latest - now + 1).unref();
      return;
    }
    const before = warm.isolate.cpuTime;
    // CPU time alone also grows with later runs that got onto the isolate after the runaway ended;
    // a task queued on the isolate's thread goes through only if nothing holds that thread.
    let answered = false;
    warm.isolate.compileScript('0').then(
      () => (answered = true),
      () => undefined,
    );
    this.timers
      .setTimeout(() => {
        if (warm.isolate.isDisposed || answered || warm.isolate.cpuTime <= before) return;
        for (const run of warm.executing) {
          if (suspects.has(run)) run.stoppedByReset = true;
          else run.requeue = true;
        }
        this.pool.discard(warm);
      }, SPIN_CHECK_MS)
      .unref();
  }

  private explain(error: unknown, warm: WarmIsolate, slot: ExecutingRun, timeoutMs: number, memoryMb: number): Error {
    if (error instanceof ScriptError) return error;
    const message = messageOf(error);
    if (slot.stoppedByReset) {
      return new ScriptError(`script stopped: another script of this organization ran past its timeout`);
    }
    // isolated-vm's own messages only: a script's error may say anything.
    if (warm.isolate.isDisposed || message === ISOLATED_VM_MEMORY_LIMIT) {
      this.pool.discard(warm);
      return new ScriptError(`script exceeded its memory limit of ${memoryMb} MB`);
    }
    if (message === ISOLATED_VM_TIMEOUT) return new ScriptError(`script timed out after ${timeoutMs} ms`);
    if (message.includes(OVERSIZE_MARK)) {
      return new ScriptError(
        `script result is larger than ${this.maxOutputChars} characters of JSON (WEFT_SCRIPT_OUTPUT_MAX_BYTES)`,
      );
    }
    return new ScriptError(`script failed: ${message}`);
  }
}
