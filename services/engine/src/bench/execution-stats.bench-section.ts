import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { engineHttp } from '@weft/contracts';
import { executionStats } from '../projections/execution-queries.js';
import { fiveNodeProcess } from './bench-processes.js';
import type { BenchStack } from './bench-stack.js';
import { seedStatsHistory } from './stats-history-seed.js';
import { ms, percentile } from './latency-stats.js';

/**
 * GET /processes/execution-stats/:processId (as the gateway sends it on the bus) for one process
 * with `rows` stored executions (stats-history-seed.ts). Times `calls`
 * bus requests (the engine's handler with access check), then the read-model query alone; the
 * 1-minute load average beside them, since the machine may be shared.
 */
export async function executionStatsLatency(stack: BenchStack, rows: number, calls = 200): Promise<string[][]> {
  const org = randomUUID();
  const process_ = fiveNodeProcess(org);
  stack.processes.set(process_.id, process_);
  const processId = process_.id;
  const db = stack.store.db;
  const seedStart = performance.now();
  await seedStatsHistory(db, processId, org, rows);
  const seedSeconds = (performance.now() - seedStart) / 1000;
  const actor = stack.actor(org);
  const viaBus = async (): Promise<void> => {
    const reply = await stack.bus.request(
      engineHttp.executionStats,
      { params: { processId }, query: {}, body: undefined, headers: {} },
      { actor },
    );
    if (reply.status !== 200) throw new Error(`execution-stats answered ${reply.status}`);
  };
  const row = async (label: string, once: () => Promise<unknown>): Promise<string[]> => {
    for (let i = 0; i < 20; i++) await once();
    const load = loadavg()[0]?.toFixed(1);
    const latencies: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await once();
      latencies.push(performance.now() - t0);
    }
    const all = latencies.sort((a, b) => a - b);
    return [
      stack.mode,
      rows.toLocaleString('en-US'),
      label,
      ms(percentile(all, 0.5)),
      ms(percentile(all, 0.95)),
      ms(percentile(all, 0.99)),
      `${load} -> ${loadavg()[0]?.toFixed(1)}`,
      `${seedSeconds.toFixed(0)} s`,
    ];
  };
  return [
    await row('bus request (as from the gateway)', viaBus),
    await row('the read-model query alone', () => executionStats(db, processId)),
  ];
}
