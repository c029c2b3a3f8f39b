import {
  engineHttp,
  type ExecutionRecord,
  type ExecutionRequest,
  type NodeFailedData,
  type ExecutionRetryScheduledData,
} from '@weft/contracts';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { recordedStarts } from './support/node-starts.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/** Always fails: every attempt of an execution of it fails on this node. */
const alwaysFailing = () =>
  new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Down', 'scriptNode', { code: 'throw new Error("still down")' })
    .edge('In', 'Down');

describe.each(modes)('retries, timeouts and redelivered requests (%s)', (mode) => {
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  let harness: EngineHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  const runToEnd = async (h: EngineHarness, processId: string): Promise<ExecutionRecord> =>
    (await h.call(engineHttp.testProcess, { params: { processId }, query: { waitSeconds: '30' }, body: {} }, actor))
      .body as ExecutionRecord;

  test('a failed attempt is retried after the default backoff: 1 s, then doubled', async () => {
    // The harness forces 50 ms; this engine keeps the default. Its clock jumps to each retry's
    // time instead of the test waiting for it (the backoff is read on that clock).
    let offsetMs = 0;
    const now = (): Date => new Date(Date.now() + offsetMs);
    const retrySleep = async (at: Date): Promise<void> => {
      offsetMs += Math.max(0, at.getTime() - now().getTime());
    };
    harness = await startEngineHarness(mode, { retryDelayMs: undefined, now, retrySleep });
    const process = await harness.catalog.add(alwaysFailing().process({ organization_id: org, max_retries: 2 }));
    const record = await runToEnd(harness, process.id);
    expect(record).toMatchObject({ status: 'failed', attempt: 3 });
    const events = await harness.store.readStream(`execution-${record.id}`);
    // Each retry's time against the failure it follows (the same engine clock; the margin is the engine's own work).
    const delays = events.flatMap((event, index) => {
      if (event.type !== 'ExecutionRetryScheduled') return [];
      const failed = events.slice(0, index).findLast((e) => e.type === 'NodeFailed')!.data as NodeFailedData;
      return [Date.parse((event.data as ExecutionRetryScheduledData).retryAt) - Date.parse(failed.completedAt)];
    });
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(1000);
    expect(delays[0]).toBeLessThan(2000);
    expect(delays[1]).toBeGreaterThanOrEqual(2000);
    expect(delays[1]).toBeLessThan(3000);
    // Each retry started no earlier than its time on that clock: the engine waited for it.
    const retryAts = events
      .filter((event) => event.type === 'ExecutionRetryScheduled')
      .map((event) => Date.parse((event.data as ExecutionRetryScheduledData).retryAt));
    const retriedStarts = recordedStarts(events)
      .filter((start) => start.attempt > 1 && start.nodeName === 'Down')
      .map((start) => Date.parse(start.startedAt));
    expect(retriedStarts).toHaveLength(2);
    retriedStarts.forEach((startedAt, index) => expect(startedAt).toBeGreaterThanOrEqual(retryAts[index]!));
  });

  test('timeout_seconds counts from the start across retries', async () => {
    // Attempts fail at once and retries come 700 ms apart: only a deadline spanning the attempts is ever reached.
    harness = await startEngineHarness(mode, { retryDelayMs: () => 700 });
    const process = await harness.catalog.add(
      alwaysFailing().process({ organization_id: org, max_retries: 10, timeout_seconds: 1 }),
    );
    const record = await runToEnd(harness, process.id);
    expect(record.status).toBe('timeout');
    expect(record.attempt).toBeLessThan(11);
    const events = await harness.store.readStream(`execution-${record.id}`);
    expect(events.filter((e) => e.type === 'ExecutionRetryScheduled').length).toBeGreaterThanOrEqual(1);
    expect(events.at(-1)?.type).toBe('ExecutionTimedOut');
  });

  test('a redelivered execution request starts no second execution', async () => {
    // One request at a time, so a request queued after the duplicates is handled after them.
    harness = await startEngineHarness(mode, { concurrency: 1 });
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode')
        .edge('In', 'Out')
        .process({ organization_id: org }),
    );
    const request = (): ExecutionRequest => ({
      executionId: crypto.randomUUID(),
      processId: process.id,
      organizationId: org,
      inputData: { n: 1 },
      source: 'test',
      requestedAt: new Date().toISOString(),
    });
    const once = request();
    const after = request();
    // No msgId: the bus delivers each copy, as it redelivers a request whose ack was lost.
    for (const delivery of [once, once, once, after]) await harness.bus.enqueue(harness.queue.spec, delivery);
    const h = harness;
    const status = async (id: string) => (await findExecution(h.store.db, id))?.status;
    await waitUntil(async () => (await status(after.executionId)) === 'completed');
    await waitUntil(async () => (await status(once.executionId)) === 'completed');
    // And once more after it finished: the engine answers 'duplicate' and writes nothing.
    expect(await h.engine.runtime.engine.start(once)).toBe('duplicate');
    const events = await h.store.readStream(`execution-${once.executionId}`);
    expect(events.filter((e) => e.type === 'ExecutionStarted')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'ExecutionCompleted')).toHaveLength(1);
    const history = await h.call(engineHttp.listExecutions, { params: { processId: process.id } }, actor);
    expect(history.body).toMatchObject({ total: 2 });
  });
});
