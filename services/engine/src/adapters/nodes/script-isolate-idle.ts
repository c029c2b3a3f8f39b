import type { WarmIsolate } from './script-isolate-pool.js';

/**
 * Longest a run that may be called at once waits for its isolate's thread to be free: under load
 * the queued runs ahead of it drain within it, and from then on runs are called at once; a run
 * parked on a promise that never settles costs the runs behind it this much, then they queue.
 */
export const IDLE_WAIT_MS = 10;

/**
 * Nothing of the sandbox's is on the isolate's thread, or may still be: no queued run, no realm or
 * compile under way, and never a run stopped by its guard while its code was there (it may spin
 * on). A call at once made otherwise would wait for that thread, and a script spinning there
 * after an await would never let it go.
 */
export const isolateIdle = (warm: WarmIsolate): boolean =>
  warm.executing.size === 0 && warm.callsOut === 0 && !warm.runawaySuspected && !warm.isolate.isDisposed;

/**
 * Waits for the isolate's thread to be free, at most `waitMs` (one timer per batch of waiters). On
 * the real clock, not the sandbox's test clock: it orders no stop, it only delays a run a little.
 */
export class IsolateIdleWaits {
  private readonly waiting = new Map<WarmIsolate, { wake: Array<() => void>; timer: NodeJS.Timeout }>();

  constructor(private readonly waitMs = IDLE_WAIT_MS) {}

  untilIdle(warm: WarmIsolate): Promise<void> {
    return new Promise((resolve) => {
      let batch = this.waiting.get(warm);
      if (!batch) {
        const timer = setTimeout(() => this.wake(warm), this.waitMs);
        timer.unref();
        this.waiting.set(warm, (batch = { wake: [], timer }));
      }
      batch.wake.push(resolve);
    });
  }

  /** Wakes the runs waiting on `warm` if its thread is free now (called whenever something leaves it). */
  noteLeft(warm: WarmIsolate): void {
    if (this.waiting.has(warm) && (isolateIdle(warm) || warm.isolate.isDisposed)) this.wake(warm);
  }

  private wake(warm: WarmIsolate): void {
    const batch = this.waiting.get(warm);
    if (!batch) return;
    this.waiting.delete(warm);
    clearTimeout(batch.timer);
    for (const wake of batch.wake) wake();
  }
}
