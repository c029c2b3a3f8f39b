import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { executionStats, findExecution, listExecutions } from '../src/projections/execution-queries.js';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { json, startLocalHttpServer } from './support/local-http-server.js';
import { waitUntil } from './support/wait-until.js';

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
    const process = await harness.catalog.add(g.process({ organization_id: org }));
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

  test('cancelled, timed-out and retried executions are the same after a rebuild', async () => {
    const org = crypto.randomUUID();
    const actor = actorOf(org);
    const run = (processId: string, query: Record<string, string> = {}) =>
      harness.call(engineHttp.testProcess, { params: { processId }, query, body: {} }, actor);
    const waits = (seconds: number) =>
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Pause', 'waitNode', { seconds })
        .node('Out', 'outputNode')
        .edge('In', 'Pause')
        .edge('Pause', 'Out');
    const cancelled = await harness.catalog.add(waits(60).process({ organization_id: org }));
    const timedOut = await harness.catalog.add(waits(60).process({ organization_id: org, timeout_seconds: 1 }));
    const failing = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Flaky', 'scriptNode', { code: 'throw new Error("still down")' })
      .edge('In', 'Flaky');
    const retried = await harness.catalog.add(failing.process({ organization_id: org, max_retries: 2 }));
    // Fails its first call, answers the second: retried once, then completed.
    let calls = 0;
    const server = await startLocalHttpServer((_request, res) =>
      ++calls === 1 ? json(res, 400, { error: 'not yet' }) : json(res, 200, { ok: true }),
    );
    const recovering = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Flaky', 'integrationNode', { url: `${server.url}/flaky`, retries: 0 })
      .edge('In', 'Flaky');
    const recovered = await harness.catalog.add(recovering.process({ organization_id: org, max_retries: 2 }));

    const started = (await run(cancelled.id, { waitSeconds: '0' })).body as { execution_id: string };
    const pauseState = async () =>
      (await findExecution(harness.store.db, started.execution_id))?.node_states.find((n) => n.node_name === 'Pause')
        ?.status;
    await waitUntil(async () => (await pauseState()) === 'running');
    const cancelReply = await harness.call(engineHttp.cancelExecution, { params: { id: started.execution_id } }, actor);
    expect(cancelReply.status).toBe(200);
    const ids = [
      started.execution_id,
      ((await run(timedOut.id, { waitSeconds: '20' })).body as ExecutionRecord).id,
      ((await run(retried.id, { waitSeconds: '20' })).body as ExecutionRecord).id,
      ((await run(recovered.id, { waitSeconds: '20' })).body as ExecutionRecord).id,
    ];
    await server.close();
    const processes = [cancelled, timedOut, retried, recovered];
    const snapshot = async () => ({
      records: await Promise.all(ids.map((id) => findExecution(harness.store.db, id))),
      pages: await Promise.all(processes.map((p) => listExecutions(harness.store.db, p.id, { page: 1, pageSize: 10 }))),
      stats: await Promise.all(processes.map((p) => executionStats(harness.store.db, p.id))),
    });
    const before = await snapshot();
    expect(before.records.map((r) => [r?.status, r?.attempt])).toEqual([
      ['cancelled', 1],
      ['timeout', 1],
      ['failed', 3],
      ['completed', 2],
    ]);
    expect(before.records.map((r) => r?.node_states.find((s) => s.node_name !== 'In')?.status)).toEqual([
      'cancelled',
      'cancelled',
      'failed',
      'completed',
    ]);

    await rebuildProjection(harness.store, executionsProjection);
    expect(await snapshot()).toEqual(before);
  });
});
