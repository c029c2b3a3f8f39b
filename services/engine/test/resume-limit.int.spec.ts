import type { ExecutionEvent, ExecutionRecord, ProcessRecord } from '@weft/contracts';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { seedExecution } from './support/seed-execution.js';
import { waitUntil } from './support/wait-until.js';

/**
 * An execution whose engine keeps dying on the same node is not resumed forever: the stored
 * events count resumes (ExecutionResumed) since the last progress, and after WEFT_ENGINE_MAX_RESUMES
 * (3) the next engine fails it with "engine stopped repeatedly while running node <label>".
 */
describe('resumes without progress are limited (PostgreSQL + NATS)', () => {
  let harness: EngineHarness;
  let server: LocalHttpServer;
  let process_: ProcessRecord;
  let hits = 0;
  const g = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Slow', 'integrationNode', { url: 'http://placeholder' })
    .node('Out', 'outputNode')
    .edge('In', 'Slow')
    .edge('Slow', 'Out');

  beforeAll(async () => {
    server = await startLocalHttpServer((_request, res) => json(res, 200, { hit: ++hits }));
    harness = await startEngineHarness('distributed', { leaseMs: 1000 });
    process_ = g.process();
    process_.nodes.find((n) => n.id === g.id('Slow'))!.config.url = `${server.url}/slow`;
    process_ = await harness.catalog.add(process_);
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  /** NodeStarted with its input as references (v2) and as a copy (v1): valid for either schema. */
  const nodeStarted = (executionId: string, label: string, type: string, from: string[], at: string) =>
    ({
      type: 'NodeStarted',
      data: {
        executionId,
        nodeId: g.id(label),
        nodeName: label,
        nodeType: type,
        inputFrom: from.map((parent) => ({ nodeId: g.id(parent) })),
        inputData: {},
        attempt: 1,
        startedAt: at,
      },
    }) as unknown as ExecutionEvent;

  /** In completed, then `resumes` times: an engine resumed it and started Slow, then died. */
  const crashLoop =
    (resumes: number) =>
    (executionId: string, at: string): ExecutionEvent[] => {
      const startSlow = nodeStarted(executionId, 'Slow', 'integrationNode', ['In'], at);
      const events: ExecutionEvent[] = [
        nodeStarted(executionId, 'In', 'inputNode', [], at),
        {
          type: 'NodeCompleted',
          data: {
            executionId,
            nodeId: g.id('In'),
            outputData: {},
            handles: ['output'],
            completedAt: at,
            durationMs: 0,
          },
        },
        startSlow,
      ];
      for (let i = 0; i < resumes; i++) {
        events.push(
          { type: 'ExecutionResumed', data: { executionId, runningNodeIds: [g.id('Slow')], resumedAt: at } },
          startSlow,
        );
      }
      return events;
    };
  const record = async (id: string): Promise<ExecutionRecord | undefined> => findExecution(harness.database.db, id);
  const eventTypes = async (id: string) => (await harness.store.readStream(`execution-${id}`)).map((e) => e.type);

  test('after 3 resumes without progress the execution fails on the node it kept dying in', async () => {
    const before = hits;
    const id = await seedExecution(harness.store, process_, crashLoop(3));
    await waitUntil(async () => (await record(id))?.status === 'failed', 20_000);
    const failed = (await record(id))!;
    expect(failed.error_message).toBe('engine stopped repeatedly while running node Slow');
    expect(failed.node_states.find((s) => s.node_name === 'Slow')?.status).toBe('cancelled');
    const types = await eventTypes(id);
    expect(types.filter((t) => t === 'ExecutionResumed')).toHaveLength(3);
    expect(types.filter((t) => t === 'NodeStarted')).toHaveLength(5);
    expect(types.at(-1)).toBe('ExecutionFailed');
    expect(hits).toBe(before);
  });

  test('with fewer resumes it is resumed once more (and the resume recorded) and finishes', async () => {
    const before = hits;
    const id = await seedExecution(harness.store, process_, crashLoop(2));
    await waitUntil(async () => (await record(id))?.status === 'completed', 20_000);
    const types = await eventTypes(id);
    expect(types.filter((t) => t === 'ExecutionResumed')).toHaveLength(3);
    expect(hits).toBe(before + 1);
  });
});
