import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { openDatabase } from '@weft/event-store';
import { sql } from 'kysely';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { testDatabaseUrl } from './support/test-services.js';
import { waitUntil } from './support/wait-until.js';

/**
 * A 30-day wait: the run is parked (unloaded from memory, no lease, a due row written in the
 * same commit), is not resumed as an orphan, survives a restart of its engine, and wakes on time
 * (the engines' clock is injected, so the test moves it instead of waiting).
 */
describe('long waits are parked durably and woken on time (PostgreSQL + NATS)', () => {
  const DAY = 24 * 3600 * 1000;
  const schema = `test_engine_park_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  let offsetMs = 0;
  const now = (): Date => new Date(Date.now() + offsetMs);
  let first: EngineHarness | undefined;
  let second: EngineHarness | undefined;

  afterAll(async () => {
    await first?.close();
    await second?.close();
    const owner = await openDatabase({ url: testDatabaseUrl() });
    await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(owner.db);
    await owner.close();
  });

  test('a 30-day wait is unloaded, outlives its engine, and completes at its time, not before', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Month', 'waitNode', { seconds: 30 * 24 * 3600 })
      .node('Out', 'outputNode', { fields: { waited: '{{input["Month"]["waitedUntil"]}}' } })
      .edge('In', 'Month')
      .edge('Month', 'Out');
    first = await startEngineHarness('distributed', { now, leaseMs: 1000 }, { schema });
    const process_ = await first.catalog.add(g.process({ organization_id: org, timeout_seconds: 40 * 24 * 3600 }));
    const reply = await first.call(
      engineHttp.testProcess,
      { params: { processId: process_.id }, query: { waitSeconds: '0' }, body: {} },
      actor,
    );
    const id = (reply.body as { execution_id: string }).execution_id;
    const parkedRow = async (harness: EngineHarness) =>
      (
        await sql<{ due_at: Date }>`SELECT due_at FROM engine_parked_waits WHERE execution_id = ${id}`.execute(
          harness.database.db,
        )
      ).rows[0];
    await waitUntil(
      async () => (await parkedRow(first!)) !== undefined && !first!.engine.runtime.engine.isRunningHere(id),
    );

    const stored = await first.store.readStream(`execution-${id}`);
    const waitStart = Date.parse(
      (
        stored.find((e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === g.id('Month'))!
          .data as { startedAt: string }
      ).startedAt,
    );
    const dueAt = new Date(waitStart + 30 * DAY).toISOString();
    expect(stored.at(-1)).toMatchObject({ type: 'ExecutionParked', data: { dueAt } });
    expect(new Date((await parkedRow(first))!.due_at).toISOString()).toBe(dueAt);
    expect(
      (await sql`SELECT 1 FROM engine_execution_leases WHERE execution_id = ${id}`.execute(first.database.db)).rows,
    ).toHaveLength(0);
    expect(first.engine.runtime.engine.activeCount).toBe(0);

    await first.close();
    first = undefined;
    // A new engine, a minute before the wait is due: the execution stays parked (no orphan resume).
    offsetMs = Date.parse(dueAt) - Date.now() - 60_000;
    second = await startEngineHarness('distributed', { now, leaseMs: 1000 }, { schema });
    const engine = second.engine.runtime.engine;
    await engine.maintain();
    await engine.maintain();
    const record = (): Promise<ExecutionRecord | undefined> => findExecution(second!.database.db, id);
    expect((await record())?.status).toBe('running');
    expect((await second.store.readStream(`execution-${id}`)).map((e) => e.type)).not.toContain('ExecutionResumed');
    expect(engine.isRunningHere(id)).toBe(false);

    // Its time comes: the wait completes, counted from its first start.
    offsetMs = Date.parse(dueAt) - Date.now() + 1000;
    await engine.maintain();
    await waitUntil(async () => (await record())?.status === 'completed', 20_000);
    expect((await record())?.output_data).toEqual({ Out: { waited: dueAt } });
    expect(await parkedRow(second)).toBeUndefined();
  });

  test('embedded: a parked wait (until an ISO time) can be cancelled, which removes its due row', async () => {
    const embedded = await startEngineHarness('embedded', { now, leaseMs: 1000 });
    try {
      offsetMs = 0;
      const until = new Date(Date.now() + 30 * DAY).toISOString();
      const g = new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Later', 'waitNode', { until })
        .node('Out', 'outputNode')
        .edge('In', 'Later')
        .edge('Later', 'Out');
      const process_ = await embedded.catalog.add(g.process({ organization_id: org, timeout_seconds: 40 * 24 * 3600 }));
      const reply = await embedded.call(
        engineHttp.testProcess,
        { params: { processId: process_.id }, query: { waitSeconds: '0' }, body: {} },
        actor,
      );
      const id = (reply.body as { execution_id: string }).execution_id;
      const dueRows = async () =>
        (
          await sql<{ due_at: Date }>`SELECT due_at FROM engine_parked_waits WHERE execution_id = ${id}`.execute(
            embedded.database.db,
          )
        ).rows;
      await waitUntil(async () => (await dueRows()).length === 1 && !embedded.engine.runtime.engine.isRunningHere(id));
      expect(new Date((await dueRows())[0]!.due_at).toISOString()).toBe(until);

      const cancelled = await embedded.call(engineHttp.cancelExecution, { params: { id } }, actor);
      expect(cancelled.body).toMatchObject({ status: 'cancelled' });
      expect(await dueRows()).toHaveLength(0);
      // Its time passing wakes nothing.
      offsetMs = 31 * DAY;
      expect(await embedded.engine.runtime.engine.maintain()).toEqual([]);
      expect((await findExecution(embedded.database.db, id))?.status).toBe('cancelled');
    } finally {
      await embedded.close();
    }
  });

  test('embedded: a parked wait due before the next scan is woken by a timer at its time', async () => {
    const embedded = await startEngineHarness('embedded', { now, leaseMs: 1000 });
    try {
      offsetMs = 0;
      const g = new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Hour', 'waitNode', { seconds: 3600 })
        .node('Out', 'outputNode', { fields: { waited: '{{input["Hour"]["waitedUntil"]}}' } })
        .edge('In', 'Hour')
        .edge('Hour', 'Out');
      const process_ = await embedded.catalog.add(g.process({ organization_id: org, timeout_seconds: 7200 }));
      const reply = await embedded.call(
        engineHttp.testProcess,
        { params: { processId: process_.id }, query: { waitSeconds: '0' }, body: {} },
        actor,
      );
      const id = (reply.body as { execution_id: string }).execution_id;
      const engine = embedded.engine.runtime.engine;
      const parked = async () =>
        (await embedded.store.readStream(`execution-${id}`)).find((e) => e.type === 'ExecutionParked');
      await waitUntil(async () => (await parked()) !== undefined && !engine.isRunningHere(id));
      const dueAt = (await parked())!.data as { dueAt: string };
      // A second before it is due: the scan arms a timer instead of waking it.
      offsetMs = Date.parse(dueAt.dueAt) - Date.now() - 1000;
      expect(await engine.maintain()).toEqual([]);
      await waitUntil(async () => (await findExecution(embedded.database.db, id))?.status === 'completed', 20_000);
      const record = (await findExecution(embedded.database.db, id))!;
      expect(record.output_data).toEqual({ Out: { waited: dueAt.dueAt } });
      const resumedAt = (await embedded.store.readStream(`execution-${id}`)).find((e) => e.type === 'ExecutionResumed')!
        .data as { resumedAt: string };
      expect(Date.parse(resumedAt.resumedAt)).toBeGreaterThanOrEqual(Date.parse(dueAt.dueAt));
    } finally {
      await embedded.close();
    }
  });
});
