import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { engineTables } from './support/engine-tables.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * Read models equal a rebuild, byte by byte, for held synchronous runs
 * whose values go to blob storage (the trigger's input, node outputs, the execution's outputs),
 * held (one commit) or not (start first), short or released by the hold timer mid-run.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('read models of held runs with values in blob storage equal a rebuild (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness(mode, {
      syncRunHoldMs: 100,
      eventLimits: { maxEventBytes: 1024 * 1024, valueInlineMaxBytes: 512 },
    });
  });
  afterAll(() => harness.close());

  test('large input only (trigger -> output)', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode', { fields: { n: '{{input["In"]["n"]}}' } })
        .edge('In', 'Out')
        .process({ organization_id: org }),
    );
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, body: { n: 1, text: 'x'.repeat(4000) } },
      actor,
    );
    expect((reply.body as ExecutionRecord).status).toBe('completed');
    const live = await engineTables(harness.store.db);
    await rebuildProjection(harness.store, executionsProjection);
    expect(await engineTables(harness.store.db)).toEqual(live);
  });

  test('large outputs, and a run released by the hold timer mid-run', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Big', 'scriptNode', { code: `return { text: "y".repeat(4000) };` })
        .node('Slow', 'scriptNode', { code: `const end = Date.now() + 300; while (Date.now() < end) {} return null;` })
        .node('Out', 'outputNode')
        .edge('In', 'Slow')
        .edge('Slow', 'Big')
        .edge('Big', 'Out')
        .process({ organization_id: org }),
    );
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, body: { n: 2 } },
      actor,
    );
    expect((reply.body as ExecutionRecord).status).toBe('completed');
    const live = await engineTables(harness.store.db);
    await rebuildProjection(harness.store, executionsProjection);
    expect(await engineTables(harness.store.db)).toEqual(live);
  });
});
