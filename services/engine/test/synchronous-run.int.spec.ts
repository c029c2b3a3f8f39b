import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import type { Actor } from '@weft/bus';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/** Registers In -> Double (script) -> Out in the actor's organization and runs it synchronously with `{n}`. */
const runDoubling = async (harness: EngineHarness, actor: Actor, n: number) => {
  const process = await harness.catalog.add(
    new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Double', 'scriptNode', { code: 'return { n: input.In.n * 2 };' })
      .node('Out', 'outputNode', { fields: { n: '{{input["Double"]["n"]}}' } })
      .edge('In', 'Double')
      .edge('Double', 'Out')
      .process({ organization_id: actor.organizationId }),
  );
  return harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: { n } }, actor);
};

/**
 * A synchronous test run on an engine with a free slot is accepted and started in one commit and
 * run there, without the work queue's hop; its events are the same as a queued run's.
 */
describe.each(modes)('a synchronous test run (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  /** Each event of the stream with the id of the transaction that wrote it. */
  const eventsWithTransactions = async (executionId: string) =>
    (
      await sql<{ type: string; tx: string }>`
        SELECT type, xmin::text AS tx FROM events WHERE stream_id = ${`execution-${executionId}`}
        ORDER BY stream_version`.execute(harness.database.db)
    ).rows;

  test('stores ExecutionAccepted and ExecutionStarted in one commit and answers the finished record', async () => {
    const reply = await runDoubling(harness, actor, 21);
    expect(reply.status).toBe(200);
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', output_data: { Out: { n: 42 } } });

    const events = await eventsWithTransactions(record.id);
    expect(events.map((event) => event.type).slice(0, 2)).toEqual(['ExecutionAccepted', 'ExecutionStarted']);
    expect(events.at(-1)!.type).toBe('ExecutionCompleted');
    expect(events[0]!.tx).toBe(events[1]!.tx);
    const stored = await harness.call(engineHttp.getExecution, { params: { id: record.id } }, actor);
    expect(stored.body).toEqual(record);
  });
});

describe.each(modes)("a run's node events (%s)", (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    // A window wider than any test: what is committed before a run ends is what no window held back.
    harness = await startEngineHarness(mode, { lazyAppendMs: 60_000 });
  });
  afterAll(() => harness.close());

  test('wait for the run to end and are committed with it, in one commit after the start', async () => {
    const reply = await runDoubling(harness, actor, 2);
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', output_data: { Out: { n: 4 } } });

    const { rows } = await sql<{ type: string; tx: string }>`
      SELECT type, xmin::text AS tx FROM events WHERE stream_id = ${`execution-${record.id}`}
      ORDER BY stream_version`.execute(harness.database.db);
    const commits = [...new Set(rows.map((row) => row.tx))];
    expect(commits).toHaveLength(2);
    expect(rows.filter((row) => row.tx === commits[0]).map((row) => row.type)).toEqual([
      'ExecutionAccepted',
      'ExecutionStarted',
    ]);
    expect(rows.filter((row) => row.tx === commits[1]).map((row) => row.type)).toEqual(
      expect.arrayContaining(['NodeStarted', 'NodeCompleted', 'ExecutionCompleted']),
    );
  });

  test('but a node with effects outside the run (a wait) has its start committed while it runs', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Pause', 'waitNode', { seconds: 30 })
        .node('Out', 'outputNode')
        .edge('In', 'Pause')
        .edge('Pause', 'Out')
        .process({ organization_id: org }),
    );
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, query: { waitSeconds: '0' }, body: {} },
      actor,
    );
    const executionId = (reply.body as { execution_id: string }).execution_id;
    const started = async () =>
      (await harness.store.readStream(`execution-${executionId}`)).some(
        (event) => event.type === 'NodeStarted' && (event.data as { nodeName: string }).nodeName === 'Pause',
      );
    await waitUntil(started, 20_000);
    expect(await started()).toBe(true);
    await harness.call(engineHttp.cancelExecution, { params: { id: executionId } }, actor);
  });
});
