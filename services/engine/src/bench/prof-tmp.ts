import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fiveNodeProcess } from './bench-processes.js';
import { openBenchStack } from './bench-stack.js';

const mode = (process.argv[2] ?? 'embedded') as 'embedded' | 'distributed';
const stack = await openBenchStack(mode);
const org = randomUUID();
const p = fiveNodeProcess(org);
stack.processes.set(p.id, p);
const actor = stack.actor(org);
const timings = new Map<string, { n: number; ms: number }>();
const wrap = (obj: any, name: string, label: string) => {
  const orig = obj[name].bind(obj);
  obj[name] = async (...a: unknown[]) => {
    const t = performance.now();
    try { return await orig(...a); } finally {
      const e = timings.get(label) ?? { n: 0, ms: 0 }; e.n++; e.ms += performance.now() - t; timings.set(label, e);
    }
  };
};
if (process.argv[3] === 'noproj') (stack.store as any).projections.length = 0;
wrap(stack.store, 'appendMany', 'appendMany');
wrap(stack.store, 'streamVersion', 'streamVersion');
wrap(stack.store.db, 'executeQuery', 'db.executeQuery');
for (let i = 0; i < 50; i++) await stack.testProcess(p.id, { amount: 50 }, actor);
timings.clear();
const N = 300;
const t0 = performance.now();
for (let i = 0; i < N; i++) await stack.testProcess(p.id, { amount: i % 2 ? 50 : 150 }, actor);
const total = performance.now() - t0;
console.log(mode, 'per execution', (total / N).toFixed(2), 'ms');
for (const [k, v] of timings) console.log(k, v.n / N, 'calls/exec', (v.ms / N).toFixed(2), 'ms/exec');
await stack.close();
process.exit(0);
