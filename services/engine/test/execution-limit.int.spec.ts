import type { ServerResponse } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import { NatsBus } from '@weft/bus';
import type { ExecutionRecord, ExecutionRequest, ProcessRecord } from '@weft/contracts';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { seedExecution } from './support/seed-execution.js';
import { waitUntil } from './support/wait-until.js';

/**
 * WEFT_ENGINE_MAX_RUNNING_EXECUTIONS caps what one engine runs at once, counting executions
 * started from the queue and orphans it resumes: at the cap the consumer pulls nothing (requests
 * wait in the queue) and orphans wait for the next scan; each freed slot lets one more in.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('running executions are capped per engine (%s)', (mode) => {
  let harness: EngineHarness;
  let server: LocalHttpServer;
  let process_: ProcessRecord;
  /** Requests the slow endpoint holds open: each is one execution running. */
  const held: ServerResponse[] = [];
  let mostHeldAtOnce = 0;
  const g = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Slow', 'integrationNode', { url: 'http://placeholder' })
    .node('Out', 'outputNode')
    .edge('In', 'Slow')
    .edge('Slow', 'Out');

  beforeAll(async () => {
    server = await startLocalHttpServer((_request, res) => {
      held.push(res);
      mostHeldAtOnce = Math.max(mostHeldAtOnce, held.length);
    });
    harness = await startEngineHarness(mode, { leaseMs: 1000, limits: { maxRunningExecutions: 1 } });
    process_ = g.process();
    process_.nodes.find((n) => n.id === g.id('Slow'))!.config.url = `${server.url}/slow`;
    process_ = await harness.catalog.add(process_);
  });
  afterAll(async () => {
    for (const res of held.splice(0)) json(res, 200, {});
    await harness.close();
    await server.close();
  });

  const request = (): ExecutionRequest => ({
    executionId: crypto.randomUUID(),
    processId: process_.id,
    organizationId: process_.organization_id,
    inputData: {},
    source: 'test',
    requestedAt: new Date().toISOString(),
  });
  const status = async (id: string): Promise<ExecutionRecord['status'] | undefined> =>
    (await findExecution(harness.database.db, id))?.status;

  test('at the cap requests stay queued and orphans wait; each freed slot takes exactly one more', async () => {
    const engine = harness.engine.runtime.engine;
    const refused = jest.fn();
    const tryTake = engine.slots.tryTake.bind(engine.slots);
    jest.spyOn(engine.slots, 'tryTake').mockImplementation(() => {
      const slot = tryTake();
      if (!slot) refused();
      return slot;
    });

    const first = request();
    await harness.bus.enqueue(harness.queue.spec, first, { msgId: first.executionId });
    await waitUntil(() => held.length === 1);
    // An orphan (its engine died in Slow) and two more requests arrive while the slot is taken.
    const orphan = await seedExecution(harness.store, process_, (executionId, at) => [
      {
        type: 'NodeStarted',
        data: {
          executionId,
          nodeId: g.id('In'),
          nodeName: 'In',
          nodeType: 'inputNode',
          inputFrom: [],
          inputData: {},
          attempt: 1,
          startedAt: at,
        },
      },
      {
        type: 'NodeCompleted',
        data: { executionId, nodeId: g.id('In'), outputData: {}, handles: ['output'], completedAt: at, durationMs: 0 },
      },
    ]);
    const queued = [request(), request()];
    for (const next of queued) await harness.bus.enqueue(harness.queue.spec, next, { msgId: next.executionId });

    // The consumer (and the orphan scan) asked for a slot and were told no: nothing else started.
    await waitUntil(() => refused.mock.calls.length >= 2);
    expect(held).toHaveLength(1);
    expect(engine.activeCount).toBe(1);
    expect(await status(queued[0]!.executionId)).toBeUndefined();
    expect(await status(queued[1]!.executionId)).toBeUndefined();
    if (harness.bus instanceof NatsBus) {
      // Not even pulled: both wait in the stream, where another replica could take them.
      const jsm = await jetstreamManager(harness.bus.connection);
      const info = await jsm.consumers.info(harness.queue.spec.stream, harness.queue.durable);
      expect({ pending: info.num_pending, pulled: info.num_ack_pending }).toEqual({ pending: 2, pulled: 0 });
    }

    // Release one at a time: each freed slot lets exactly one execution (queued or orphan) run.
    for (let released = 0; released < 4; released++) {
      await waitUntil(() => held.length === 1, 20_000);
      json(held.shift()!, 200, { ok: true });
    }
    for (const id of [first.executionId, orphan, ...queued.map((q) => q.executionId)]) {
      await waitUntil(async () => (await status(id)) === 'completed', 20_000);
    }
    expect(mostHeldAtOnce).toBe(1);
    expect(engine.slots.inUse).toBe(0);
  });
});
