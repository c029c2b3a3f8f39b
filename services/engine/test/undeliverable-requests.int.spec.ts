import type { Bus } from '@weft/bus';
import {
  catalogInternal,
  engineHttp,
  ProblemError,
  type ExecutionRecord,
  type ExecutionRequest,
  type ProcessRecord,
} from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/**
 * An accepted execution request is never dropped: after WEFT_EXECUTION_MAX_DELIVER failed
 * deliveries it becomes a failed execution (cause and delivery count, visible through GET
 * execution) when its process loads, else a dead letter that can be replayed.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('execution requests that fail every delivery (%s)', (mode) => {
  let harness: EngineHarness;
  let process_: ProcessRecord;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  /** Process loads the catalog still fails, per process (it answers 503, as when it is overloaded). */
  const outage = new Map<string, number>();
  /** The engine's bus, with the catalog's 503 answer injected while a process is in its outage. */
  const withCatalogOutage = (bus: Bus): Bus =>
    new Proxy(bus, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (key !== 'request') return typeof value === 'function' ? value.bind(target) : value;
        const request: Bus['request'] = async (spec, payload, options) => {
          if (spec.subject === catalogInternal.getProcess.subject) {
            const processId = (payload as { processId: string }).processId;
            const left = outage.get(processId) ?? 0;
            if (left > 0) {
              outage.set(processId, left - 1);
              throw new ProblemError(503, 'process catalog unavailable');
            }
          }
          return target.request(spec, payload, options);
        };
        return request;
      },
    });

  beforeAll(async () => {
    harness = await startEngineHarness(mode, { limits: { executionMaxDeliver: 2 } }, { engineBus: withCatalogOutage });
    process_ = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode')
        .edge('In', 'Out')
        .process({ organization_id: org }),
    );
  });
  afterAll(async () => {
    await harness.close();
  });

  const request = (processId = process_.id): ExecutionRequest => ({
    executionId: crypto.randomUUID(),
    processId,
    organizationId: org,
    inputData: { order: 7 },
    source: 'test',
    requestedAt: new Date().toISOString(),
  });
  /** GET execution: the record, or undefined on 404. */
  const getExecution = async (id: string): Promise<ExecutionRecord | undefined> => {
    try {
      return (await harness.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
    } catch (error) {
      if (error instanceof ProblemError && error.status === 404) return undefined;
      throw error;
    }
  };

  test('after the last delivery the execution is recorded as failed, with the cause and the delivery count', async () => {
    const failing = request();
    // Both deliveries fail; the catalog is back when the failure is recorded.
    outage.set(process_.id, 2);
    await harness.bus.enqueue(harness.queue.spec, failing, { msgId: failing.executionId });

    await waitUntil(async () => (await getExecution(failing.executionId)) !== undefined, 20_000);
    const record = (await getExecution(failing.executionId))!;
    expect(record).toMatchObject({ status: 'failed', process_id: process_.id, input_data: { order: 7 } });
    expect(record.error_message).toBe('execution request failed 2 deliveries: process catalog unavailable');
    const events = await harness.store.readStream(`execution-${failing.executionId}`);
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['ExecutionStarted', 'ExecutionFailed']));
    expect(events.find((event) => event.type === 'ExecutionFailed')?.data).toMatchObject({ deliveryCount: 2 });
  });

  test('when the process cannot be loaded at all it becomes a dead letter, and a replay runs it', async () => {
    // A process the engine has not loaded yet: one it holds at its current revision needs no catalog.
    const unloaded = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode')
        .edge('In', 'Out')
        .process({ organization_id: org }),
    );
    const failing = request(unloaded.id);
    outage.set(unloaded.id, 3);
    await harness.bus.enqueue(harness.queue.spec, failing, { msgId: failing.executionId });

    const deadLetters = harness.engine.runtime.deadLetters;
    await waitUntil(
      async () => (await deadLetters.list()).some((d) => d.request.executionId === failing.executionId),
      20_000,
    );
    const [entry] = (await deadLetters.list()).filter((d) => d.request.executionId === failing.executionId);
    expect(entry).toEqual({
      request: failing,
      error: 'execution request failed 2 deliveries: process catalog unavailable',
      deliveryCount: 2,
    });
    expect(await getExecution(failing.executionId)).toBeUndefined();

    // The documented replay: the same request (same execution id) back on the queue.
    const replayed = await deadLetters.replay(failing.executionId, (dead) =>
      harness.bus.enqueue(harness.queue.spec, dead, { msgId: `${dead.executionId}-replay` }),
    );
    expect(replayed).toBe(true);
    await waitUntil(async () => (await getExecution(failing.executionId))?.status === 'completed', 20_000);
    expect((await deadLetters.list()).some((d) => d.request.executionId === failing.executionId)).toBe(false);
  });
});
