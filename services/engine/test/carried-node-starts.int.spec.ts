import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { recordedStarts } from './support/node-starts.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/**
 * A node that touches nothing outside the execution (input, conditional, script, output) and ends
 * within a window (a second by default) records one event: its NodeCompleted or NodeFailed carries
 * its start. One that runs longer has its start recorded on its own after the window, so the
 * record shows it running.
 */
describe.each(modes)('node starts carried by their end (%s)', (mode) => {
  let harness: EngineHarness;
  /** Records a start on its own after 200 ms: a node that spins 2.5 s shows running. */
  let shortWindow: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    // A window no loaded machine outlasts: a quick node's start is always carried by its end.
    harness = await startEngineHarness(mode, { carriedStartMaxMs: 60_000 });
    shortWindow = await startEngineHarness(mode, { carriedStartMaxMs: 200 });
  });
  afterAll(async () => {
    await harness.close();
    await shortWindow.close();
  });

  const startAsync = async (on: EngineHarness, processId: string, body: unknown = {}): Promise<string> => {
    const reply = await on.call(
      engineHttp.testProcess,
      { params: { processId }, query: { waitSeconds: '0' }, body },
      actor,
    );
    return (reply.body as { execution_id: string }).execution_id;
  };
  const record = async (id: string, on = harness): Promise<ExecutionRecord> =>
    (await on.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
  const stateOf = (execution: ExecutionRecord, name: string) =>
    execution.node_states.find((node) => node.node_name === name);

  test('a quick node records one event, its NodeCompleted carrying its start', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Quick', 'scriptNode', { code: 'return input.In.n + 1' })
      .edge('In', 'Quick');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    const id = await startAsync(harness, process.id, { n: 1 });
    await waitUntil(async () => (await record(id)).status !== 'running', 20_000);
    expect(await record(id)).toMatchObject({ status: 'completed' });

    const events = await harness.store.readStream(`execution-${id}`);
    const ofNode = (name: string) => events.filter((e) => (e.data as { nodeId?: string }).nodeId === g.id(name));
    expect(ofNode('In').map((e) => e.type)).toEqual(['NodeCompleted']);
    expect(ofNode('Quick').map((e) => e.type)).toEqual(['NodeCompleted']);
    expect(ofNode('Quick')[0]!.data).toMatchObject({
      nodeName: 'Quick',
      nodeType: 'scriptNode',
      inputFrom: [{ nodeId: g.id('In') }],
      attempt: 1,
      startedAt: expect.any(String),
      outputData: 2,
    });
    // The record reads the same as for two events: start, input, end, duration.
    const quick = stateOf(await record(id), 'Quick')!;
    const [quickStart] = recordedStarts(events, g.id('Quick'));
    expect(quick).toMatchObject({
      status: 'completed',
      started_at: quickStart!.startedAt,
      input_data: { In: { n: 1 } },
      output_data: 2,
    });
    expect(Date.parse(quick.completed_at!)).toBeGreaterThanOrEqual(Date.parse(quick.started_at!));
  });

  test('a slow node shows running past the window, then records its start and its end', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Slow', 'scriptNode', { code: 'const end = Date.now() + 2500; while (Date.now() < end) {} return 7;' })
      .edge('In', 'Slow');
    const process = await shortWindow.catalog.add(g.process({ organization_id: org }));
    const id = await startAsync(shortWindow, process.id, { n: 1 });

    // Past the window the slow node reads running, with its start time and input.
    await waitUntil(async () => stateOf(await record(id, shortWindow), 'Slow')?.status === 'running', 20_000);
    const running = stateOf(await record(id, shortWindow), 'Slow')!;
    expect(running.started_at).toEqual(expect.any(String));
    expect(running.input_data).toEqual({ In: { n: 1 } });
    await waitUntil(async () => (await record(id, shortWindow)).status !== 'running', 20_000);
    expect(await record(id, shortWindow)).toMatchObject({ status: 'completed' });

    const events = await shortWindow.store.readStream(`execution-${id}`);
    const slow = events.filter((e) => (e.data as { nodeId?: string }).nodeId === g.id('Slow'));
    expect(slow.map((e) => e.type)).toEqual(['NodeStarted', 'NodeCompleted']);
    expect(slow[1]!.data).not.toHaveProperty('startedAt');
  });

  test('a quick node that fails records one NodeFailed carrying its start', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Boom', 'scriptNode', { code: 'throw new Error("boom")' })
      .edge('In', 'Boom');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    const id = await startAsync(harness, process.id);
    await waitUntil(async () => (await record(id)).status !== 'running', 20_000);
    const finished = await record(id);
    expect(finished).toMatchObject({ status: 'failed' });
    expect(stateOf(finished, 'Boom')).toMatchObject({ status: 'failed', started_at: expect.any(String) });
    const events = await harness.store.readStream(`execution-${id}`);
    const boom = events.filter((e) => (e.data as { nodeId?: string }).nodeId === g.id('Boom'));
    expect(boom.map((e) => e.type)).toEqual(['NodeFailed']);
    expect(boom[0]).toMatchObject({
      schemaVersion: 2,
      data: { nodeName: 'Boom', nodeType: 'scriptNode', attempt: 1, error: expect.stringContaining('boom') },
    });
  });
});

describe('a run with a long wait beside a node whose start is not recorded yet (PostgreSQL + NATS)', () => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness('distributed');
  });
  afterAll(() => harness.close());

  test('is parked only once that node has ended: the node runs once', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Month', 'waitNode', { seconds: 30 * 24 * 3600 })
      .node('Spin', 'scriptNode', { code: 'const end = Date.now() + 300; while (Date.now() < end) {} return 1;' })
      .edge('In', 'Month')
      .edge('In', 'Spin');
    const process = await harness.catalog.add(g.process({ organization_id: org, timeout_seconds: 40 * 24 * 3600 }));
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, query: { waitSeconds: '0' }, body: {} },
      actor,
    );
    const id = (reply.body as { execution_id: string }).execution_id;
    const parked = async () =>
      (await sql`SELECT 1 FROM engine_parked_waits WHERE execution_id = ${id}`.execute(harness.database.db)).rows
        .length > 0;
    await waitUntil(parked, 20_000);
    const events = await harness.store.readStream(`execution-${id}`);
    const spin = events.filter((e) => (e.data as { nodeId?: string }).nodeId === g.id('Spin'));
    // Parked after Spin ended (its end on record before the park), not in the middle of it. Its
    // start is carried by its end, unless a loaded machine let the start's one-second timer fire first.
    expect(spin.map((e) => e.type).filter((type) => type !== 'NodeStarted')).toEqual(['NodeCompleted']);
    const spinEnd = spin.find((e) => e.type === 'NodeCompleted')!;
    expect(events.findIndex((e) => e.type === 'ExecutionParked')).toBeGreaterThan(events.indexOf(spinEnd));
    await harness.call(engineHttp.cancelExecution, { params: { id } }, actor);
  });
});
