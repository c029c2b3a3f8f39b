import type { ExecutionRecord } from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { recordedStarts } from './support/node-starts.js';
import { waitUntil } from './support/wait-until.js';

/** A run resumed by another engine reads the outputs that went to blob storage back as its seeds. */
describe('resume with values in blob storage (PostgreSQL + NATS)', () => {
  const eventLimits = { maxEventBytes: 64 * 1024, valueInlineMaxBytes: 2048 };
  let first: EngineHarness;
  let second: EngineHarness | undefined;
  beforeAll(async () => {
    first = await startEngineHarness('distributed', { leaseMs: 900, eventLimits });
  });
  afterAll(async () => {
    await second?.close();
    await first.close();
  });

  test('the resumed run sees the large output of a node that completed before, without running it again', async () => {
    const org = crypto.randomUUID();
    const actor = actorOf(org);
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Large', 'scriptNode', { code: 'return { text: "x".repeat(10000) }' })
      .node('Pause', 'waitNode', { seconds: 2 })
      .node('Measure', 'scriptNode', { code: 'return input.Large.text.length' })
      .edge('In', 'Large')
      .edge('Large', 'Pause')
      .edge('Pause', 'Measure');
    const process = await first.catalog.add(g.process({ organization_id: org }));
    const accepted = await first.engine.runtime.api.testProcess(
      { params: { processId: process.id }, query: { waitSeconds: '0' }, body: {}, headers: {} },
      { headers: {}, actor },
    );
    const executionId = (accepted.body as { execution_id: string }).execution_id;
    const stream = `execution-${executionId}`;
    const startedPause = async () =>
      (await first.store.readStream(stream)).some(
        (e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === g.id('Pause'),
      );
    await waitUntil(startedPause);
    const largeCompleted = (await first.store.readStream(stream)).find(
      (e) => e.type === 'NodeCompleted' && (e.data as { nodeId: string }).nodeId === g.id('Large'),
    );
    expect(largeCompleted?.data).toHaveProperty('outputDataRef');

    // The first engine stops mid-wait; another engine takes the execution over.
    await first.engine.runtime.engine.stop();
    second = await startEngineHarness(
      'distributed',
      { leaseMs: 900, eventLimits },
      { schema: first.database.schema, queue: first.queue },
    );
    const record = async () =>
      (
        await second!.engine.runtime.api.getExecution(
          { params: { id: executionId }, query: {}, body: undefined, headers: {} },
          { headers: {}, actor },
        )
      ).body as ExecutionRecord;
    await waitUntil(async () => (await record()).status !== 'running', 20_000);

    const finished = await record();
    expect(finished).toMatchObject({ status: 'completed', error_message: null });
    expect(finished.node_states.find((n) => n.node_name === 'Measure')?.output_data).toBe(10000);
    const starts = recordedStarts(await second.store.readStream(stream), g.id('Large'));
    expect(starts).toHaveLength(1);
  });
});
