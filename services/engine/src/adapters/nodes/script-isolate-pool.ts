import ivm from 'isolated-vm';
import type { FrozenRealm } from './frozen-realm.js';
import { ScriptError } from './script-error.js';

export interface ExecutingRun {
  /** When its time is up (ms, the sandbox's clock). */
  deadline: number;
  /** Set when its isolate is discarded for a runaway it was queued behind: it runs again on a fresh one. */
  requeue?: boolean;
  /** Set when it was on the isolate with the runaway (it may be the one spinning): it fails, told why. */
  stoppedByReset?: boolean;
}

export interface WarmIsolate {
  isolate: ivm.Isolate;
  /** Its heap limit: the largest memoryMb its organization asked for. */
  memoryMb: number;
  /** Its one realm, frozen, shared by its runs (created by the first run). */
  realm?: Promise<FrozenRealm>;
  /** Compiled scripts by code, in that realm. */
  scripts: Map<string, Promise<ivm.Reference>>;
  /** Each run whose code is queued or running on this isolate. */
  executing: Set<ExecutingRun>;
  /** Runs holding it (queued or running): an isolate in use is never evicted. */
  users: number;
  /** Its memory no longer counts against the budget. */
  released?: boolean;
}

export interface IsolateLimits {
  /** Largest memoryMb a script node may ask for (WEFT_SCRIPT_MAX_MEMORY_MB). */
  maxMemoryMb: number;
  /** Warm isolates kept (WEFT_SCRIPT_MAX_WARM_ISOLATES). */
  maxWarmIsolates: number;
  /** Sum of the heap limits of all live isolates (WEFT_SCRIPT_MEMORY_BUDGET_MB). */
  memoryBudgetMb: number;
  /** Runs of one organization setting up on its isolate at once; the others wait in turn (WEFT_SCRIPT_RUNS_PER_ISOLATE). */
  runsPerIsolate: number;
}

export const DEFAULT_ISOLATE_LIMITS: IsolateLimits = {
  maxMemoryMb: 256,
  maxWarmIsolates: 32,
  memoryBudgetMb: 2048,
  runsPerIsolate: 4,
};

/**
 * One warm isolate per organization, whatever its scripts' memoryMb (the isolate grows to the
 * largest asked for: a larger one replaces it, the old one goes once its runs end). The engine
 * holds at most `maxWarmIsolates`, and their heap limits add up to at most `memoryBudgetMb`, so
 * no organization can take the host's memory: to make room the least recently used idle isolate
 * goes; when every isolate is busy the run fails at once with a clear error rather than waiting,
 * since a wait would hold its execution slot and hide the overload (the process's retries apply).
 */
export class IsolatePool {
  private readonly limits: IsolateLimits;
  /** Warm isolates by organization, least recently used first. */
  private readonly warm = new Map<string, WarmIsolate>();
  /** Replaced by a larger one while runs still used them: disposed when the last one leaves. */
  private readonly retired = new Set<WarmIsolate>();
  private liveMb = 0;
  private closed = false;

  constructor(limits: Partial<IsolateLimits> = {}) {
    this.limits = { ...DEFAULT_ISOLATE_LIMITS, ...limits };
  }

  /** Organizations with a warm isolate, least recently used first. */
  warmOrganizations(): string[] {
    return [...this.warm.keys()];
  }

  /** The heap limits of every live isolate, added up. */
  get liveMemoryMb(): number {
    return this.liveMb;
  }

  /** Runs whose code is on an isolate now (not those still compiling): tests wait on it to order their runs. */
  get runningScripts(): number {
    let running = 0;
    for (const warm of [...this.warm.values(), ...this.retired]) running += warm.executing.size;
    return running;
  }

  /** The organization's isolate, held for one run until `release`. */
  acquire(organizationId: string, memoryMb: number): WarmIsolate {
    if (this.closed) throw new ScriptError('the script sandbox is closed (the engine is stopping)');
    const { maxMemoryMb } = this.limits;
    if (memoryMb > maxMemoryMb) {
      throw new ScriptError(
        `memoryMb ${memoryMb} is above this engine's limit of ${maxMemoryMb} MB (WEFT_SCRIPT_MAX_MEMORY_MB)`,
      );
    }
    let warm = this.warm.get(organizationId);
    if (warm && (warm.isolate.isDisposed || warm.memoryMb < memoryMb)) {
      this.retire(organizationId, warm);
      warm = undefined;
    }
    if (warm) {
      this.warm.delete(organizationId); // most recently used goes last
      this.warm.set(organizationId, warm);
    } else {
      warm = this.create(organizationId, memoryMb);
    }
    warm.users += 1;
    return warm;
  }

  release(warm: WarmIsolate): void {
    warm.users -= 1;
    if (warm.users === 0 && this.retired.has(warm)) this.free(warm);
  }

  /** Drops an isolate now (a runaway, out of memory): its runs fail, the next run gets a fresh one. */
  discard(warm: WarmIsolate): void {
    for (const [organizationId, candidate] of this.warm) if (candidate === warm) this.warm.delete(organizationId);
    this.free(warm);
  }

  /** Disposes every isolate; later acquires fail (a run waiting for its turn must not start a new one). */
  disposeAll(): void {
    this.closed = true;
    for (const warm of [...this.warm.values(), ...this.retired]) this.free(warm);
    this.warm.clear();
  }

  private retire(organizationId: string, warm: WarmIsolate): void {
    this.warm.delete(organizationId);
    if (warm.users === 0 || warm.isolate.isDisposed) this.free(warm);
    else this.retired.add(warm);
  }

  private create(organizationId: string, memoryMb: number): WarmIsolate {
    this.makeRoom(memoryMb);
    const warm: WarmIsolate = {
      isolate: new ivm.Isolate({ memoryLimit: memoryMb }),
      memoryMb,
      scripts: new Map(),
      executing: new Set(),
      users: 0,
    };
    this.liveMb += memoryMb;
    this.warm.set(organizationId, warm);
    return warm;
  }

  /** Evicts idle isolates, least recently used first, until one of `memoryMb` fits both limits. */
  private makeRoom(memoryMb: number): void {
    const { maxWarmIsolates, memoryBudgetMb } = this.limits;
    const fits = (): boolean => this.warm.size < maxWarmIsolates && this.liveMb + memoryMb <= memoryBudgetMb;
    for (const [organizationId, candidate] of this.warm) {
      if (fits()) return;
      if (candidate.users > 0) continue;
      this.warm.delete(organizationId);
      this.free(candidate);
    }
    if (!fits()) {
      throw new ScriptError(
        `no script capacity on this engine: busy isolates hold ${this.liveMb} of ${memoryBudgetMb} MB ` +
          `(WEFT_SCRIPT_MEMORY_BUDGET_MB, WEFT_SCRIPT_MAX_WARM_ISOLATES ${maxWarmIsolates}); try again later`,
      );
    }
  }

  private free(warm: WarmIsolate): void {
    this.retired.delete(warm);
    if (!warm.released) {
      warm.released = true;
      this.liveMb -= warm.memoryMb;
    }
    if (!warm.isolate.isDisposed) warm.isolate.dispose();
  }
}
