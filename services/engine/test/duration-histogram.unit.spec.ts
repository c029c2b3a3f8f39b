import { bucketValue, durationBucket, histogramPercentile } from '../src/projections/duration-histogram.js';

/** The precision docs/engine.md promises for p95_duration_seconds. */
describe('duration histogram buckets', () => {
  test('below 128 ms a bucket is one exact duration', () => {
    for (let ms = 0; ms < 128; ms++) {
      expect(durationBucket(ms)).toBe(ms);
      expect(bucketValue(durationBucket(ms))).toBe(ms);
    }
  });

  test('above, every duration is within 1/128 of the value of its bucket, from 128 ms to 2^52 ms', () => {
    const samples: number[] = [];
    for (let bit = 7; bit <= 52; bit++) {
      const power = 2 ** bit;
      samples.push(power - 1, power, power + 1, Math.floor(power * 1.37), Math.floor(power * 1.9999));
    }
    samples.push(259_201_500, 40_000_250, 3_600_000, 86_400_000 * 30);
    for (const ms of samples) {
      expect(Math.abs(bucketValue(durationBucket(ms)) - ms)).toBeLessThanOrEqual(ms / 128);
    }
  });

  test('buckets follow the durations in order, without gaps', () => {
    const steps: number[] = [];
    let previous = durationBucket(0);
    for (let ms = 1; ms < 70_000; ms++) {
      const bucket = durationBucket(ms);
      if (bucket - previous !== 0 && bucket - previous !== 1) steps.push(ms);
      previous = bucket;
    }
    expect(steps).toEqual([]);
    // About 64 buckets per doubling: a process with durations from 1 ms to a day has under 2,000.
    expect(durationBucket(86_400_000)).toBeLessThan(2000);
  });

  test('a negative duration (clocks set back) counts as 0 ms', () => {
    expect(durationBucket(-5)).toBe(0);
  });

  /** percentile_cont as PostgreSQL computes it, over every duration. */
  const percentileCont = (sorted: readonly number[], fraction: number): number => {
    const rank = fraction * (sorted.length - 1);
    const lower = sorted[Math.floor(rank)] as number;
    return rank === Math.floor(rank)
      ? lower
      : lower + (rank - Math.floor(rank)) * ((sorted[Math.ceil(rank)] as number) - lower);
  };
  const histogramOf = (durations: readonly number[]): [number[], number[]] => {
    const counts = new Map<number, number>();
    for (const ms of durations) counts.set(durationBucket(ms), (counts.get(durationBucket(ms)) ?? 0) + 1);
    const buckets = [...counts.keys()].sort((a, b) => a - b);
    return [buckets, buckets.map((bucket) => counts.get(bucket) as number)];
  };

  test("the percentile is percentile_cont's: exact below 128 ms, within 1/128 above", () => {
    let seed = 7;
    const next = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (const [size, max] of [
      [1, 100],
      [2, 127],
      [21, 127],
      [400, 127],
      [1000, 5_000_000],
    ] as const) {
      const durations = Array.from({ length: size }, () => Math.floor(next() * max)).sort((a, b) => a - b);
      const [buckets, counts] = histogramOf(durations);
      for (const fraction of [0.5, 0.95, 0.99]) {
        const exact = percentileCont(durations, fraction);
        const estimated = histogramPercentile(buckets, counts, fraction) as number;
        if (max < 128) expect(estimated).toBe(exact);
        else expect(Math.abs(estimated - exact)).toBeLessThanOrEqual(exact / 128);
      }
    }
    expect(histogramPercentile([], [], 0.95)).toBeNull();
  });
});
