/** Time for listeners: the system clock, or a manual one in tests (DST changes, missed ticks). */
export interface Clock {
  now(): Date;
  /** Resolves at `at` (at once when past), or when `signal` aborts. */
  sleepUntil(at: Date, signal: AbortSignal): Promise<void>;
}

/** setTimeout cannot wait longer than 2^31-1 ms; longer waits go in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => new Date(),
  sleepUntil: (at, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      let timer: NodeJS.Timeout;
      const step = (): void => {
        const left = at.getTime() - Date.now();
        if (left <= 0) return finish();
        timer = setTimeout(step, Math.min(left, MAX_TIMER_MS));
      };
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      signal.addEventListener('abort', finish, { once: true });
      step();
    }),
};
