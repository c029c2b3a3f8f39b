/**
 * Timers for any distance in time. `setTimeout` fires at once above 2^31-1 ms (24.8 days), so a
 * longer timer is armed in steps, each re-reading the (injectable) clock, and fires only once
 * the clock reaches `at`.
 */
export const MAX_TIMER_STEP_MS = 2 ** 31 - 1;

/** Calls `fire` once `now()` reaches `at`; returns what cancels it. */
export function armTimer(at: Date, now: () => Date, fire: () => void, maxStepMs = MAX_TIMER_STEP_MS): () => void {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const step = (): void => {
    if (cancelled) return;
    const left = at.getTime() - now().getTime();
    if (left <= 0) return fire();
    timer = setTimeout(step, Math.min(left, maxStepMs));
  };
  step();
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}

/** Resolves once `now()` reaches `at`; rejects with the signal's reason when it aborts first. */
export const sleepUntil = (at: Date, now: () => Date, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    if (at.getTime() <= now().getTime()) return resolve();
    const onAbort = (): void => {
      cancel();
      reject(signal.reason as Error);
    };
    const cancel = armTimer(at, now, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
