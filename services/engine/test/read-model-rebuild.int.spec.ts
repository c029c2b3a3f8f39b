import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { executionStats, findExecution, listExecutions } from '../src/projections/execution-queries.js';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';

/** Invariant 3: the execution read models rebuilt from the events alone are identical. */
describe('execution read models rebuild from events (PostgreSQL)', () => {
  let harness: EngineHarness;
  beforeAll(async () => {
    harness = await startEngineHarness('distributed');
  });
  afterAll(() => harness.close());

  test('records, node states, history and stats are the same after a rebuild', async () => {
    const org = crypto.randomUUID();
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Double', 'scriptNode', {
        code: 'if (input.Each.item < 0) throw new Error("negative"); return input.Each.item * 2;',
      })
      .node('Out', 'outputNode')
      .edge('In', 'Each')
      .edge('Each', 'Double', 'start')
      .edge('Each', 'Out', 'output');
    const process = harness.catalog.add(g.process({ organization_id: org }));
    const ids: string[] = [];
    for (const items of [[1, 2], [3], [-1], []]) {
      const reply = await harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, body: { items } },
        actorOf(org),
      );
      ids.push((reply.body as ExecutionRecord).id);
    }
    const snapshot = async () => ({
      records: await Promise.all(ids.map((id) => findExecution(harness.store.db, id))),
      page: await listExecutions(harness.store.db, process.id, { page: 1, pageSize: 10 }),
      stats: await executionStats(harness.store.db, process.id),
    });
    const before = await snapshot();
    expect(before.records.map((r) => r?.status)).toEqual(['completed', 'completed', 'failed', 'completed']);
    expect(before.records[0]?.node_states.find((s) => s.node_name === 'Double')?.iterations).toBe(2);

    await rebuildProjection(harness.store, executionsProjection);
    expect(await snapshot()).toEqual(before);
  });
});
