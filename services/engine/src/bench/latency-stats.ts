import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';

/** Percentiles and table rows for benchmark output. */
export function percentile(sortedMs: readonly number[], fraction: number): number {
  if (sortedMs.length === 0) return 0;
  const index = Math.min(sortedMs.length - 1, Math.max(0, Math.ceil(fraction * sortedMs.length) - 1));
  return sortedMs[index] as number;
}

export const ms = (value: number): string => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

export function printTable(title: string, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

export interface SequentialLatency {
  p50: string;
  p95: string;
  p99: string;
  /** The 1-minute load average before and after, since the machine may be shared. */
  load: string;
}

/** `once` awaited `calls` times one after the other, after `warmUp` untimed calls. */
export async function timeOneAtATime(
  once: () => Promise<unknown>,
  calls: number,
  warmUp = 20,
): Promise<SequentialLatency> {
  for (let i = 0; i < warmUp; i++) await once();
  const loadBefore = loadavg()[0]?.toFixed(1);
  const latencies: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await once();
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  return {
    p50: ms(percentile(latencies, 0.5)),
    p95: ms(percentile(latencies, 0.95)),
    p99: ms(percentile(latencies, 0.99)),
    load: `${loadBefore} -> ${loadavg()[0]?.toFixed(1)}`,
  };
}
