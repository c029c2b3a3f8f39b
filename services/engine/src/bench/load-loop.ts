import { performance } from 'node:perf_hooks';

/** What a closed-loop load measured: calls, failures, wall-clock seconds, calls/s and sorted latencies (ms). */
export interface LoadResult {
  count: number;
  failures: number;
  seconds: number;
  rate: number;
  sortedMs: number[];
}

/**
 * `concurrency` workers call `once(i)` back to back for `seconds` (worker w takes i = w, w + c, ...),
 * each call timed; a call that answers false or throws counts as a failure.
 */
export async function runLoad(
  concurrency: number,
  seconds: number,
  once: (i: number) => Promise<boolean>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = worker; performance.now() < end; i += concurrency) {
        const t0 = performance.now();
        const ok = await once(i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) failures++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    count: latencies.length,
    failures,
    seconds: elapsed,
    rate: latencies.length / elapsed,
    sortedMs: latencies.sort((a, b) => a - b),
  };
}
