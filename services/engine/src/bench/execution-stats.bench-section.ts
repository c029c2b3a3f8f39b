import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { engineHttp } from '@weft/contracts';
import { executionStats } from '../projections/execution-queries.js';
import { fiveNodeProcess } from './bench-processes.js';
import type { BenchStack } from './bench-stack.js';
import { seedStatsHistory } from './stats-history-seed.js';
import { timeOneAtATime } from './latency-stats.js';

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
    const timed = await timeOneAtATime(once, calls);
    return [
      stack.mode,
      rows.toLocaleString('en-US'),
      label,
      timed.p50,
      timed.p95,
      timed.p99,
      timed.load,
      `${seedSeconds.toFixed(0)} s`,
    ];
  };
  return [
    await row('bus request (as from the gateway)', viaBus),
    await row('the read-model query alone', () => executionStats(db, processId)),
  ];
}
