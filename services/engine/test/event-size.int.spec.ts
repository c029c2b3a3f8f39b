import { engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import type { StoredEvent } from '@weft/event-store';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { recordedStarts } from './support/node-starts.js';

/**
 * Execution events stay small: NodeStarted records where the input comes from, not a copy of it;
 * large values go to blob storage once; an event over the limit is never appended. The execution
 * record still shows every node's input and output.
 */
describe('execution event sizes (embedded)', () => {
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  let harness: EngineHarness;
  let tight: EngineHarness;
  beforeAll(async () => {
    harness = await startEngineHarness('embedded', {
      eventLimits: { maxEventBytes: 64 * 1024, valueInlineMaxBytes: 2048 },
      // A start window no loaded machine outlasts: C's end always carries its start.
      carriedStartMaxMs: 60_000,
    });
    // Values are never moved to blob storage here, so an event can outgrow the limit.
    tight = await startEngineHarness('embedded', {
      eventLimits: { maxEventBytes: 4096, valueInlineMaxBytes: 1024 * 1024 },
    });
  });
  afterAll(async () => {
    await harness?.close();
    await tight?.close();
  });

  const run = async (on: EngineHarness, process: ProcessRecord, body: unknown) => {
    const { id: processId } = await on.catalog.add(process);
    const reply = await on.call(engineHttp.testProcess, { params: { processId }, body }, actor);
    const id = (reply.body as { execution_id: string }).execution_id;
    const record = (await on.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
    const events = await on.store.readStream(`execution-${id}`);
    return { record, events };
  };
  const bytes = (event: StoredEvent): number => Buffer.byteLength(JSON.stringify(event.data));
  const node = (record: ExecutionRecord, name: string) => record.node_states.find((n) => n.node_name === name)!;

  test('NodeStarted names the parent runs instead of copying the input; the record shows the input', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('A', 'scriptNode', { code: 'return { text: "a".repeat(1500) }' })
      .node('B', 'scriptNode', { code: 'return { length: input.A.text.length }' })
      .node('C', 'scriptNode', { code: 'return input.B.length + input.In.add' })
      .edge('In', 'A')
      .edge('A', 'B')
      .edge('B', 'C');
    const { record, events } = await run(harness, g.process({ organization_id: org }), { add: 1 });

    expect(record.status).toBe('completed');
    expect(node(record, 'C').output_data).toBe(1501);
    // C touches nothing outside: its NodeCompleted carries its start.
    const [startedC] = recordedStarts(events, g.id('C'));
    expect(startedC!.event).toMatchObject({ type: 'NodeCompleted', schemaVersion: 3 });
    expect(startedC!.inputFrom).toEqual([{ nodeId: g.id('B') }]);
    expect(startedC!.event.data).not.toHaveProperty('inputData');
    expect(bytes(startedC!.event)).toBeLessThan(400);
    expect(node(record, 'C').input_data).toEqual({
      In: { add: 1 },
      A: { text: 'a'.repeat(1500) },
      B: { length: 1500 },
    });
    expect(node(record, 'A').input_data).toEqual({ In: { add: 1 } });
    expect(node(record, 'In').input_data).toEqual({});
  });

  test("a loop's body runs do not store the loop's input once per item", async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Big', 'scriptNode', { code: 'return { pad: "p".repeat(1500) }' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Double', 'scriptNode', { code: 'return input.Each.item * 2 + input.Big.pad.length' })
      .edge('In', 'Big')
      .edge('Big', 'Each')
      .edge('Each', 'Double', 'start');
    const { record, events } = await run(harness, g.process({ organization_id: org }), { items: [1, 2, 3, 4] });

    expect(record.status).toBe('completed');
    expect(node(record, 'Each').output_data).toEqual({
      results: [1, 2, 3, 4].map((i) => ({ Double: i * 2 + 1500 })),
    });
    const bodyStarts = recordedStarts(events, g.id('Double')).map((start) => start.event);
    expect(bodyStarts).toHaveLength(4);
    expect(bodyStarts.map((e) => (e.data as { loopItem: unknown }).loopItem)).toEqual([1, 2, 3, 4]);
    for (const event of bodyStarts) expect(bytes(event)).toBeLessThan(400);
    // The node row shows its last run's input, rebuilt from the references.
    expect(node(record, 'Double').input_data).toEqual({
      In: { items: [1, 2, 3, 4] },
      Big: { pad: 'p'.repeat(1500) },
      Each: { item: 4, index: 3 },
    });
  });

  test('an output over the inline limit is stored once in blob storage and read back', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Large', 'scriptNode', { code: 'return { text: "x".repeat(10000) }' })
      .node('Measure', 'scriptNode', { code: 'return input.Large.text.length' })
      .edge('In', 'Large')
      .edge('Large', 'Measure');
    const { record, events } = await run(harness, g.process({ organization_id: org }), {});

    expect(record.status).toBe('completed');
    const completed = events.find(
      (e) => e.type === 'NodeCompleted' && (e.data as { nodeId: string }).nodeId === g.id('Large'),
    )!;
    expect(completed.data).not.toHaveProperty('outputData');
    expect(completed.data).toMatchObject({ outputDataRef: { url: expect.stringMatching(/^weft-blob:\/\//) } });
    expect(bytes(completed)).toBeLessThan(1000);
    expect(node(record, 'Large').output_data).toEqual({ text: 'x'.repeat(10000) });
    expect(node(record, 'Measure').output_data).toBe(10000);
    expect(node(record, 'Measure').input_data).toEqual({ In: {}, Large: { text: 'x'.repeat(10000) } });
  });

  test('an event over WEFT_EVENT_MAX_BYTES is never appended: its node fails with a clear error', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Huge', 'scriptNode', { code: 'return { text: "h".repeat(10000) }' })
      .node('After', 'scriptNode', { code: 'return 1' })
      .edge('In', 'Huge')
      .edge('Huge', 'After');
    const { record, events } = await run(tight, g.process({ organization_id: org }), {});

    expect(record.status).toBe('failed');
    expect(node(record, 'Huge')).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/NodeCompleted event of \d+ bytes exceeds WEFT_EVENT_MAX_BYTES \(4096 bytes\)/),
    });
    expect(node(record, 'After').status).toBe('pending');
    expect(
      events.some((e) => e.type === 'NodeCompleted' && (e.data as { nodeId: string }).nodeId === g.id('Huge')),
    ).toBe(false);
    for (const event of events) expect(bytes(event)).toBeLessThanOrEqual(4096);
  });

  test('outputs that fit one by one but not together fail the execution saying so', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Half', 'scriptNode', { code: 'return { text: "o".repeat(3000) }' })
      .node('OutA', 'outputNode')
      .node('OutB', 'outputNode')
      .edge('In', 'Half')
      .edge('Half', 'OutA')
      .edge('Half', 'OutB');
    const { record, events } = await run(tight, g.process({ organization_id: org }), {});

    expect(record.status).toBe('failed');
    expect(record.error_message).toMatch(
      /^the outputs could not be recorded: ExecutionCompleted event of \d+ bytes exceeds WEFT_EVENT_MAX_BYTES \(4096 bytes\)$/,
    );
    expect(node(record, 'OutA').status).toBe('completed');
    expect(node(record, 'OutB').status).toBe('completed');
    expect(events.map((e) => e.type)).not.toContain('ExecutionCompleted');
    expect(events.at(-1)!.type).toBe('ExecutionFailed');
  });

  test('an execution whose ExecutionStarted would exceed WEFT_EVENT_MAX_BYTES is refused (413) and nothing stored', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Out', 'outputNode')
      .edge('In', 'Out');
    const process = await tight.catalog.add(g.process({ organization_id: org }));
    const before = await tight.store.headPosition();
    const executionId = crypto.randomUUID();
    const start = tight.engine.runtime.engine.start({
      executionId,
      processId: process.id,
      organizationId: org,
      inputData: { text: 't'.repeat(10000) },
      source: 'test',
      requestedAt: new Date().toISOString(),
    });
    await expect(start).rejects.toMatchObject({
      problem: { status: 413, detail: expect.stringContaining('ExecutionStarted event of') },
    });
    expect(await tight.store.headPosition()).toBe(before);
    expect(await tight.store.readStream(`execution-${executionId}`)).toEqual([]);
  });

  test('a run whose graph would make a GraphSnapshotRecorded over WEFT_EVENT_MAX_BYTES is refused (413) and nothing stored', async () => {
    // The catalog takes the process (its node configs are within its own limits); only its runs are refused.
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Big', 'scriptNode', { code: `return ${JSON.stringify('x'.repeat(6000))};` })
      .edge('In', 'Big');
    const process = await tight.catalog.add(g.process({ organization_id: org }));
    const before = await tight.store.headPosition();
    await expect(
      tight.call(engineHttp.testProcess, { params: { processId: process.id }, body: {} }, actor),
    ).rejects.toMatchObject({
      problem: {
        status: 413,
        detail: expect.stringMatching(/GraphSnapshotRecorded event of \d+ bytes exceeds WEFT_EVENT_MAX_BYTES/),
      },
    });
    expect(await tight.store.headPosition()).toBe(before);
  });
});
