import type { ProcessRecord } from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { seedExecution } from './support/seed-execution.js';

const modes: EngineMode[] = ['embedded', 'distributed'];
const ORPHANS = 250;

/**
 * A dead engine's executions are all taken over by the next scan, however many it held (bounded
 * only by the survivor's free slots), not a fixed number per scan.
 */
describe.each(modes)('orphans are claimed in bulk (%s)', (mode) => {
  let harness: EngineHarness;
  let process_: ProcessRecord;
  beforeAll(async () => {
    // consume: false also leaves the maintenance timer off: each scan here is one maintain() call.
    harness = await startEngineHarness(mode, {
      consume: false,
      leaseMs: 60_000,
      limits: { maxRunningExecutions: 1000 },
    });
    process_ = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Wait', 'waitNode', { seconds: 30 })
        .node('Out', 'outputNode')
        .edge('In', 'Wait')
        .edge('Wait', 'Out')
        .process(),
    );
  });
  afterAll(async () => {
    await harness.close();
  });

  const seedOrphans = async (count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await seedExecution(harness.store, process_, () => []));
    return ids;
  };

  test(`one scan resumes all ${ORPHANS} executions of a dead engine`, async () => {
    const orphans = await seedOrphans(ORPHANS);
    const resumed = await harness.engine.runtime.engine.maintain();
    expect(new Set(resumed)).toEqual(new Set(orphans));
    for (const id of orphans) expect(harness.engine.runtime.engine.isRunningHere(id)).toBe(true);
    // Each was resumed once: a second scan finds nothing left.
    expect(await harness.engine.runtime.engine.maintain()).toEqual([]);
  });

  if (mode === 'distributed') {
    test('two engines scanning at once share the orphans without overlap; each keeps to its slot limit', async () => {
      const other = await startEngineHarness(
        mode,
        { consume: false, leaseMs: 60_000, limits: { maxRunningExecutions: 40 } },
        { schema: harness.database.schema, queue: harness.queue },
      );
      try {
        const orphans = await seedOrphans(100);
        const [mine, theirs] = await Promise.all([
          harness.engine.runtime.engine.maintain(),
          other.engine.runtime.engine.maintain(),
        ]);
        expect(theirs.length).toBeLessThanOrEqual(40);
        expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
        expect(new Set([...mine, ...theirs])).toEqual(new Set(orphans));
      } finally {
        await other.close();
      }
    });
  }
});
