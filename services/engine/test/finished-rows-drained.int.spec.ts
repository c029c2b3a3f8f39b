import { engineHttp } from '@weft/contracts';
import type { RecentlyFinishedRows } from '../src/projections/recently-finished-rows.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/** After a mix of synchronous runs (200s, 202s, runs longer than the hold), no finished rows stay behind. */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('RecentlyFinishedRows drains (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness(mode, { syncRunHoldMs: 1000 });
  });
  afterAll(() => harness.close());

  const finishedRows = (): RecentlyFinishedRows =>
    (harness.engine.runtime.api as unknown as { deps: { finishedRows: RecentlyFinishedRows } }).deps.finishedRows;

  test('every entry put is taken', async () => {
    const processOf = (spinMs: number) =>
      harness.catalog.add(
        new GraphBuilder()
          .node('In', 'inputNode', { triggerType: 'manual' })
          .node('S', 'scriptNode', {
            code: `const end = Date.now() + ${spinMs}; while (Date.now() < end) {} return 1;`,
          })
          .node('Out', 'outputNode')
          .edge('In', 'S')
          .edge('S', 'Out')
          .process({ organization_id: org }),
      );
    const processes = await Promise.all([0, 30, 300, 1500].map(processOf));
    const waits = ['0', '0.05', '0.5', '60'];
    // The organization's first script run builds its isolate and frozen realm, which on a loaded
    // machine can outlast the hold (the run is then written in two commits, not whole): done first.
    await harness.call(engineHttp.testProcess, { params: { processId: processes[0]!.id }, body: {} }, actor);
    let puts = 0;
    // Puts counted by wrapping put (the map is taken from as soon as it is filled).
    const finished = finishedRows();
    const put = finished.put.bind(finished);
    finished.put = (...args: Parameters<RecentlyFinishedRows['put']>) => {
      puts++;
      put(...args);
    };
    // One short run alone first: written whole, so at least one entry is put whatever the mix's timing.
    await harness.call(engineHttp.testProcess, { params: { processId: processes[0]!.id }, body: {} }, actor);
    expect(puts).toBe(1);
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const reply = await harness.call(
          engineHttp.testProcess,
          { params: { processId: processes[i % 4]!.id }, query: { waitSeconds: waits[(i >> 2) % 4]! }, body: {} },
          actor,
        );
        statuses.push(reply.status);
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(puts).toBeGreaterThan(0);
    expect(statuses).toContain(202);
    expect(finished.size).toBe(0);
  });
});
