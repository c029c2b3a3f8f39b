import { jetstreamManager } from '@nats-io/jetstream';
import { NatsBus } from '@weft/bus';
import { engineHttp, type ExecutionRecord, type ExecutionRequest } from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/**
 * An id the API hands out is readable and cancellable at once, while its request still waits in
 * the work queue (here: no engine consumes it), and the cancel holds when an engine picks it up.
 */
describe.each(modes)('an accepted execution before any engine takes it (%s)', (mode) => {
  let api: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    api = await startEngineHarness(mode, { consume: false });
  });
  afterAll(async () => {
    await api.close();
  });

  const processWithAWait = () =>
    api.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Wait', 'waitNode', { seconds: 30 })
        .node('Out', 'outputNode')
        .edge('In', 'Wait')
        .edge('Wait', 'Out')
        .process({ organization_id: org }),
    );
  const eventTypes = async (executionId: string): Promise<string[]> =>
    (await api.store.readStream(`execution-${executionId}`)).map((event) => event.type);

  test('POST test answers 202; GET reads it running and queued; a cancel holds when an engine starts it', async () => {
    const process = await processWithAWait();
    const accepted = await api.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, query: { waitSeconds: '0' }, body: { n: 1 } },
      actor,
    );
    expect(accepted.status).toBe(202);
    const executionId = (accepted.body as { execution_id: string }).execution_id;
    expect(accepted.body).toEqual({ execution_id: executionId, status: 'running', queued: true });

    const read = await api.call(engineHttp.getExecution, { params: { id: executionId } }, actor);
    expect(read.status).toBe(200);
    expect(read.body as ExecutionRecord).toMatchObject({
      id: executionId,
      status: 'running',
      queued: true,
      process_id: process.id,
      trigger_node_id: process.nodes[0]!.id,
      node_states: [],
    });
    const listed = await api.call(engineHttp.listExecutions, { params: { processId: process.id } }, actor);
    expect((listed.body as { items: ExecutionRecord[] }).items.map((item) => [item.id, item.queued])).toEqual([
      [executionId, true],
    ]);

    const cancelled = await api.call(engineHttp.cancelExecution, { params: { id: executionId } }, actor);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body as ExecutionRecord).toMatchObject({ status: 'cancelled' });
    expect((cancelled.body as ExecutionRecord).queued).toBeUndefined();

    // The queued request reaches an engine: nothing starts, no node runs.
    const request: ExecutionRequest = {
      executionId,
      processId: process.id,
      organizationId: org,
      inputData: { n: 1 },
      triggeredByUserId: actor.userId,
      source: 'test',
      requestedAt: new Date().toISOString(),
    };
    await expect(api.engine.runtime.engine.start(request)).resolves.toBe('duplicate');
    expect(await eventTypes(executionId)).toEqual(['ExecutionAccepted', 'ExecutionCancelled']);
    const stats = await api.call(engineHttp.executionStats, { params: { processId: process.id } }, actor);
    expect(stats.body).toMatchObject({ total_runs: 1, running: 0, cancelled: 1 });
  });

  test('the internal run subject (trigger webhooks, test runs) with waitSeconds 0 answers the queued record', async () => {
    const process = await processWithAWait();
    const executionId = crypto.randomUUID();
    const record = await api.engine.runtime.api.runExecution({
      executionId,
      processId: process.id,
      organizationId: org,
      inputData: {},
      triggeredByUserId: null,
      source: 'trigger',
      requestedAt: new Date().toISOString(),
      waitSeconds: 0,
    });
    expect(record).toMatchObject({ id: executionId, status: 'running', queued: true });
    // The same id again (a trigger's deterministic id, a resumed batch) is still one execution.
    await api.engine.runtime.api.runExecution({
      executionId,
      processId: process.id,
      organizationId: org,
      inputData: {},
      triggeredByUserId: null,
      source: 'trigger',
      requestedAt: new Date().toISOString(),
      waitSeconds: 0,
    });
    expect(await eventTypes(executionId)).toEqual(['ExecutionAccepted']);
  });

  if (mode === 'distributed') {
    test('an engine consuming the queue later starts the uncancelled one and skips the cancelled one', async () => {
      const process = await processWithAWait();
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const reply = await api.call(
          engineHttp.testProcess,
          { params: { processId: process.id }, query: { waitSeconds: '0' }, body: {} },
          actor,
        );
        ids.push((reply.body as { execution_id: string }).execution_id);
      }
      const [kept, dropped] = ids as [string, string];
      await api.call(engineHttp.cancelExecution, { params: { id: dropped } }, actor);
      const worker = await startEngineHarness(mode, {}, { schema: api.database.schema, queue: api.queue });
      try {
        const jsm = await jetstreamManager((api.bus as NatsBus).connection);
        await waitUntil(async () => {
          const info = await jsm.consumers.info(api.queue.spec.stream, api.queue.durable);
          return info.num_pending === 0 && info.num_ack_pending === 0;
        }, 20_000);
        await waitUntil(async () => (await eventTypes(kept)).includes('NodeStarted'), 20_000);
        expect((await eventTypes(kept)).slice(0, 2)).toEqual(['ExecutionAccepted', 'ExecutionStarted']);
        expect(await eventTypes(dropped)).toEqual(['ExecutionAccepted', 'ExecutionCancelled']);
      } finally {
        await worker.close();
      }
    });
  }
});
