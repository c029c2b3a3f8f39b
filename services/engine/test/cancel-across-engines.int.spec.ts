import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/** A cancel handled by one engine stops the run parked in a wait node on another engine. */
describe('cancel across engines (PostgreSQL + NATS)', () => {
  let runner: EngineHarness;
  let reader: EngineHarness;
  beforeAll(async () => {
    runner = await startEngineHarness('distributed', { leaseMs: 900 });
    const schema = runner.database.schema;
    reader = await startEngineHarness('distributed', { consume: false }, { schema, queue: runner.queue });
  });
  afterAll(async () => {
    await reader.close();
    await runner.close();
  });

  const parkedExecution = async (actor: ReturnType<typeof actorOf>): Promise<string> => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      // Under WEFT_WAIT_PARK_AFTER_SECONDS (60), so the run stays in the runner's memory.
      .node('Park', 'waitNode', { seconds: 50 })
      .node('Out', 'outputNode')
      .edge('In', 'Park')
      .edge('Park', 'Out');
    const process = await runner.catalog.add(g.process({ organization_id: actor.organizationId }));
    const accepted = await runner.engine.runtime.api.testProcess(
      { params: { processId: process.id }, query: { waitSeconds: '0' }, body: {}, headers: {} },
      { headers: {}, actor },
    );
    const executionId = (accepted.body as { execution_id: string }).execution_id;
    await waitUntil(() => runner.engine.runtime.engine.isRunningHere(executionId));
    expect(runner.engine.runtime.engine.isRunningHere(executionId)).toBe(true);
    return executionId;
  };
  const cancelThrough = (harness: EngineHarness, executionId: string, actor: ReturnType<typeof actorOf>) =>
    harness.engine.runtime.api.cancelExecution(
      { params: { id: executionId }, query: {}, body: undefined, headers: {} },
      { headers: {}, actor },
    );

  test('the running engine stops the execution and writes nothing after the cancel', async () => {
    const actor = actorOf(crypto.randomUUID());
    const executionId = await parkedExecution(actor);

    const cancelled = await cancelThrough(reader, executionId, actor);
    expect((cancelled.body as ExecutionRecord).status).toBe('cancelled');

    await waitUntil(() => !runner.engine.runtime.engine.isRunningHere(executionId));
    expect(runner.engine.runtime.engine.isRunningHere(executionId)).toBe(false);
    const events = await runner.store.readStream(`execution-${executionId}`);
    expect(events.at(-1)?.type).toBe('ExecutionCancelled');
    const record = await runner.call(engineHttp.getExecution, { params: { id: executionId } }, actor);
    expect((record.body as ExecutionRecord).node_states.find((s) => s.node_name === 'Park')?.status).toBe('cancelled');
  });

  test('a second cancel through the engine still running it (before it learns of the first) answers 409', async () => {
    const actor = actorOf(crypto.randomUUID());
    const executionId = await parkedExecution(actor);
    expect((await cancelThrough(reader, executionId, actor)).status).toBe(200);
    // The runner stops its run at its next lease renewal; until then its state says "running".
    const stillHere = runner.engine.runtime.engine.isRunningHere(executionId);
    await expect(cancelThrough(runner, executionId, actor)).rejects.toMatchObject({ problem: { status: 409 } });
    expect(stillHere).toBe(true);
    const events = await runner.store.readStream(`execution-${executionId}`);
    expect(events.filter((e) => e.type === 'ExecutionCancelled')).toHaveLength(1);
  });
});
