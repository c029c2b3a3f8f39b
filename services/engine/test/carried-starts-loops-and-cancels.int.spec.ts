import {
  engineHttp,
  executionEventSchemas,
  validateAgainst,
  type ExecutionEventType,
  type ExecutionRecord,
} from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { findExecution } from '../src/projections/execution-queries.js';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Node starts carried by their end, where runs get complicated: loop bodies, retries, a value the
 * database refuses, a cancel mid-node. The record equals a rebuild and every event its schema.
 */
/** In -> Each (loop over `items`) -> body A -> B (A not fed by the item) -> Out after the loop. */
const loopBodyChain = (codeA: string, codeB: string) =>
  new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
    .node('A', 'scriptNode', { code: codeA })
    .node('B', 'scriptNode', { code: codeB })
    .node('Out', 'outputNode')
    .edge('In', 'Each')
    .edge('Each', 'A', 'start')
    .edge('A', 'B')
    .edge('Each', 'Out', 'output');

describe('carried node starts in loops, retries and cancels (embedded)', () => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness('embedded');
  });
  afterAll(() => harness.close());

  const run = async (processId: string, body: unknown, waitSeconds = '60'): Promise<string> => {
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId }, query: { waitSeconds }, body },
      actor,
    );
    const b = reply.body as { id?: string; execution_id?: string };
    return (b.id ?? b.execution_id)!;
  };
  const record = async (id: string): Promise<ExecutionRecord> =>
    (await harness.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
  const eventsOf = (id: string) => harness.store.readStream(`execution-${id}`);
  const schemaErrors = async (id: string) => {
    const out: unknown[] = [];
    for (const e of await eventsOf(id)) {
      const { schemaVersion, schema } = executionEventSchemas[e.type as ExecutionEventType];
      const errors = validateAgainst(schema, e.data);
      if (errors.length > 0 || e.schemaVersion !== schemaVersion)
        out.push({ type: e.type, v: e.schemaVersion, errors });
    }
    return out;
  };
  const sameAfterRebuild = async (ids: string[]) => {
    const before = await Promise.all(ids.map((id) => findExecution(harness.store.db, id)));
    await rebuildProjection(harness.store, executionsProjection);
    const after = await Promise.all(ids.map((id) => findExecution(harness.store.db, id)));
    expect(after).toEqual(before);
  };

  test('a loop body chain (node not fed by the item) with a failing iteration and a retry', async () => {
    const g = loopBodyChain(
      'return input.Each.item * 2;',
      'if (input.A < 0) throw new Error("neg"); return input.A + 1;',
    );
    const process = await harness.catalog.add(g.process({ organization_id: org, max_retries: 1 }));
    const ok = await run(process.id, { items: [1, 2, 3] });
    const bad = await run(process.id, { items: [1, -1] });
    await waitUntil(async () => (await record(bad)).status !== 'running', 30_000);
    expect((await record(ok)).status).toBe('completed');
    expect((await record(bad)).status).toBe('failed');
    const b = (await record(ok)).node_states.find((s) => s.node_name === 'B')!;
    expect(b).toMatchObject({ status: 'completed', iterations: 3 });
    expect(await schemaErrors(ok)).toEqual([]);
    expect(await schemaErrors(bad)).toEqual([]);
    await sameAfterRebuild([ok, bad]);
  });

  test('a NUL in the output of a loop body node whose start is carried fails that node, on record', async () => {
    const g = loopBodyChain('return input.Each.item;', 'return input.A === 2 ? "x\\u0000y" : input.A;');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    const id = await run(process.id, { items: [1, 2] });
    await waitUntil(async () => (await record(id)).status !== 'running', 30_000);
    const r = await record(id);
    expect(r.status).toBe('failed');
    expect(r.node_states.find((s) => s.node_name === 'B')).toMatchObject({ status: 'failed' });
    expect(r.node_states.filter((s) => s.status === 'running')).toEqual([]);
    expect(await schemaErrors(id)).toEqual([]);
    await sameAfterRebuild([id]);
  });

  test('a cancel while a slow script runs: no start recorded after the cancel, no node left running', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Slow', 'scriptNode', { code: 'const end = Date.now() + 2500; while (Date.now() < end) {} return 1;' })
      .edge('In', 'Slow');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    for (const cancelAfterMs of [300, 1500]) {
      const id = await run(process.id, {}, '0');
      await new Promise((resolve) => setTimeout(resolve, cancelAfterMs));
      await harness.engine.runtime.api.cancelExecution(
        { params: { id }, query: {}, body: undefined, headers: {} },
        { headers: {}, actor },
      );
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const events = await eventsOf(id);
      expect(events.at(-1)?.type).toBe('ExecutionCancelled');
      const r = await record(id);
      expect(r.status).toBe('cancelled');
      expect(r.node_states.filter((s) => s.status === 'running').map((s) => s.node_name)).toEqual([]);
      expect(await schemaErrors(id)).toEqual([]);
      await sameAfterRebuild([id]);
    }
  });
});
