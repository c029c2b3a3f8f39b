import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import type { Actor } from '@weft/bus';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/** Registers In -> Double (script) -> Out in the actor's organization. */
const addDoubling = (harness: EngineHarness, actor: Actor) =>
  harness.catalog.add(
    new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Double', 'scriptNode', { code: 'return { n: input.In.n * 2 };' })
      .node('Out', 'outputNode', { fields: { n: '{{input["Double"]["n"]}}' } })
      .edge('In', 'Double')
      .edge('Double', 'Out')
      .process({ organization_id: actor.organizationId }),
  );

/** Registers the doubling process and runs it synchronously with `{n}`. */
const runDoubling = async (harness: EngineHarness, actor: Actor, n: number) => {
  const process = await addDoubling(harness, actor);
  return harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: { n } }, actor);
};

/** Each event of the stream with the id of the transaction that wrote it. */
const eventsWithTransactions = async (harness: EngineHarness, executionId: string) =>
  (
    await sql<{ type: string; tx: string; data: Record<string, unknown> }>`
      SELECT type, xmin::text AS tx, data FROM events WHERE stream_id = ${`execution-${executionId}`}
      ORDER BY stream_version`.execute(harness.database.db)
  ).rows;

/**
 * A synchronous test run on an engine with a free slot is run there, without the work queue's
 * hop; its events are the same as a queued run's. A short one is written whole by one commit
 * (WEFT_SYNC_RUN_HOLD_MS); without the hold its start goes first, in a commit of its own.
 */
describe.each(modes)('a synchronous test run (%s)', (mode) => {
  let harness: EngineHarness;
  let unheld: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    // A start window no loaded machine outlasts: each node's end carries its start.
    harness = await startEngineHarness(mode, { syncRunHoldMs: 60_000, carriedStartMaxMs: 60_000 });
    unheld = await startEngineHarness(mode, { syncRunHoldMs: 0, carriedStartMaxMs: 60_000 });
  });
  afterAll(async () => {
    await harness.close();
    await unheld.close();
  });

  test('is written whole by one commit and answers the finished record', async () => {
    const reply = await runDoubling(harness, actor, 21);
    expect(reply.status).toBe(200);
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', output_data: { Out: { n: 42 } } });

    const events = await eventsWithTransactions(harness, record.id);
    // No acceptance (the request never waited in a queue); each node's end carries its start.
    expect(events.map((event) => event.type)).toEqual([
      'ExecutionStarted',
      ...['In', 'Double', 'Out'].map(() => 'NodeCompleted'),
      'ExecutionCompleted',
    ]);
    expect(events.slice(1, 4).map((event) => (event.data as { nodeName?: string }).nodeName)).toEqual([
      'In',
      'Double',
      'Out',
    ]);
    expect(new Set(events.map((event) => event.tx)).size).toBe(1);
    const stored = await harness.call(engineHttp.getExecution, { params: { id: record.id } }, actor);
    expect(stored.body).toEqual(record);
    // Started and ended in one commit: no lease was taken, none is left behind.
    const { rows } = await sql`SELECT 1 FROM engine_execution_leases WHERE execution_id = ${record.id}`.execute(
      harness.database.db,
    );
    expect(rows).toEqual([]);
  });

  test('without the hold, stores ExecutionStarted in a commit of its own first', async () => {
    const reply = await runDoubling(unheld, actor, 21);
    expect(reply.status).toBe(200);
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', output_data: { Out: { n: 42 } } });

    const events = await eventsWithTransactions(unheld, record.id);
    expect(events.map((event) => event.type).slice(0, 2)).toEqual(['ExecutionStarted', 'NodeCompleted']);
    expect(events.at(-1)!.type).toBe('ExecutionCompleted');
    expect(events[1]!.tx).not.toBe(events[0]!.tx);
    const stored = await unheld.call(engineHttp.getExecution, { params: { id: record.id } }, actor);
    expect(stored.body).toEqual(record);
  });
});

/**
 * The hold ends before the run does whenever someone could learn of the execution or the run
 * could touch something outside: the id it answers is always on record.
 */
describe.each(modes)('a held synchronous run (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness(mode, { syncRunHoldMs: 200 });
  });
  afterAll(() => harness.close());

  const slowProcess = (ms: number) =>
    harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Slow', 'scriptNode', { code: `const end = Date.now() + ${ms}; while (Date.now() < end) {} return 1;` })
        .node('Out', 'outputNode')
        .edge('In', 'Slow')
        .edge('Slow', 'Out')
        .process({ organization_id: org }),
    );

  test('longer than the hold is on record while it runs', async () => {
    const process = await slowProcess(3000);
    const reply = harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: {} }, actor);
    const started = async () =>
      Number(
        (
          await sql<{ n: string }>`
            SELECT count(*) AS n FROM engine_executions WHERE process_id = ${process.id} AND status = 'running'`.execute(
            harness.database.db,
          )
        ).rows[0]!.n,
      ) === 1;
    await waitUntil(started, 2500);
    expect(await started()).toBe(true);
    const record = (await reply).body as ExecutionRecord;
    expect(record.status).toBe('completed');
    const events = await eventsWithTransactions(harness, record.id);
    expect(events[0]!.tx).not.toBe(events.at(-1)!.tx);
  });

  test('answered 202 before it ends is on record when the answer comes', async () => {
    // Long enough that a loaded machine still answers before the run ends.
    const process = await slowProcess(3000);
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, query: { waitSeconds: '0' }, body: {} },
      actor,
    );
    expect(reply.status).toBe(202);
    const executionId = (reply.body as { execution_id: string }).execution_id;
    const now = await harness.call(engineHttp.getExecution, { params: { id: executionId } }, actor);
    expect(now.body).toMatchObject({ id: executionId, status: 'running' });
    await waitUntil(
      async () =>
        ((await harness.call(engineHttp.getExecution, { params: { id: executionId } }, actor)).body as ExecutionRecord)
          .status === 'completed',
      20_000,
    );
  });
});

describe.each(modes)("a run's node events (%s)", (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    // A window wider than any test: what is committed before a run ends is what no window held back.
    harness = await startEngineHarness(mode, { lazyAppendMs: 60_000, syncRunHoldMs: 0 });
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
    expect(rows.filter((row) => row.tx === commits[0]).map((row) => row.type)).toEqual(['ExecutionStarted']);
    expect(rows.filter((row) => row.tx === commits[1]).map((row) => row.type)).toEqual(
      expect.arrayContaining(['NodeCompleted', 'ExecutionCompleted']),
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

/**
 * Each maintenance tick the orphan scan holds every free slot while its claim is in flight. A
 * synchronous request that comes then waits for that claim and runs here, not in the queue.
 */
describe('a synchronous run during the orphan scan (distributed)', () => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    // No tick of its own in the test's time: the test runs the scan when it wants it.
    harness = await startEngineHarness('distributed', { maintenanceMs: 600_000, syncRunHoldMs: 0 });
  });
  afterAll(() => harness.close());

  test('waits for the claim and starts at once (no ExecutionAccepted)', async () => {
    const engine = harness.engine.runtime.engine;
    const process = await addDoubling(harness, actor);
    // The scan the engine ran at its start is over: every slot is free.
    await waitUntil(async () => engine.slots.inUse === 0, 10_000);
    // An orphan (running, its lease lapsed), in one statement so no scan sees half of it; another
    // transaction holds its lease row, so the claim blocks on it.
    const orphan = crypto.randomUUID();
    await sql`
      WITH execution AS (
        INSERT INTO engine_executions (id, process_id, organization_id, status, started_at, trigger_node_id)
        VALUES (${orphan}, ${crypto.randomUUID()}, ${org}, 'running', now(), 'In'))
      INSERT INTO engine_execution_leases (execution_id, owner, expires_at)
      VALUES (${orphan}, 'a-dead-engine', now() - interval '1 minute')`.execute(harness.database.db);
    let releaseRow!: () => void;
    const rowReleased = new Promise<void>((resolve) => (releaseRow = resolve));
    let rowLocked!: (pid: number) => void;
    const holderPid = new Promise<number>((resolve) => (rowLocked = resolve));
    const holder = harness.database.db.transaction().execute(async (trx) => {
      await sql`SELECT 1 FROM engine_execution_leases WHERE execution_id = ${orphan} FOR UPDATE`.execute(trx);
      rowLocked((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
      await rowReleased;
    });
    // Observes the request reaching startNow: it takes (or fails to take) a slot before it returns.
    let requestIn!: () => void;
    const inStartNow = new Promise<void>((resolve) => (requestIn = resolve));
    const startNow = engine.startNow.bind(engine);
    engine.startNow = (...args) => {
      const started = startNow(...args);
      requestIn();
      return started;
    };
    let record: ExecutionRecord | undefined;
    try {
      const pid = await holderPid;
      const scan = engine.maintain();
      const claimWaits = async () =>
        (
          await sql`SELECT 1 FROM pg_stat_activity WHERE ${pid} = ANY (pg_blocking_pids(pid))`.execute(
            harness.database.db,
          )
        ).rows.length > 0;
      await waitUntil(claimWaits, 10_000);
      expect(await claimWaits()).toBe(true);
      expect(engine.slots.free()).toBe(0);

      const reply = harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: { n: 5 } }, actor);
      await inStartNow;
      releaseRow();
      await scan;
      record = (await reply).body as ExecutionRecord;
    } finally {
      engine.startNow = startNow;
      releaseRow();
      await holder;
    }
    expect(record).toMatchObject({ status: 'completed', output_data: { Out: { n: 10 } } });
    const events = await eventsWithTransactions(harness, record.id);
    expect(events[0]!.type).toBe('ExecutionStarted');
    expect(events.map((event) => event.type)).not.toContain('ExecutionAccepted');
  });
});
