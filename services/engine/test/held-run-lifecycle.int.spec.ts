import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { sql } from 'kysely';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';

/**
 * A run held for longer than it lives (hold 60 s) times out, retries,
 * and is stopped by a graceful stop: each ends on record, the caller is answered, the read
 * model equals a rebuild, and no lease is left behind.
 */
describe('held runs: timeouts, retries, graceful stop (distributed)', () => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness('distributed', { syncRunHoldMs: 60_000 });
  });
  afterAll(() => harness.close());

  const typesOf = async (executionId: string) =>
    (await harness.store.readStream(`execution-${executionId}`)).map((event) => event.type);

  test('a held run that times out is answered with its timeout, on record', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Spin', 'scriptNode', { code: 'const end = Date.now() + 4000; while (Date.now() < end) {} return 1;' })
        .edge('In', 'Spin')
        .process({ organization_id: org, timeout_seconds: 1 }),
    );
    const started = Date.now();
    const reply = await harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: {} }, actor);
    const record = reply.body as ExecutionRecord;
    expect(reply.status).toBe(200);
    expect(record.status).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await typesOf(record.id)).at(-1)).toBe('ExecutionTimedOut');
  });

  test('a held run that fails and retries is answered failed, and its rows equal a rebuild', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Boom', 'scriptNode', { code: 'throw new Error("boom");' })
        .edge('In', 'Boom')
        .process({ organization_id: org, max_retries: 2 }),
    );
    const reply = await harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: {} }, actor);
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'failed', attempt: 3 });
    const live = (await sql`SELECT * FROM engine_executions WHERE id = ${record.id}`.execute(harness.store.db)).rows;
    await rebuildProjection(harness.store, executionsProjection);
    expect((await sql`SELECT * FROM engine_executions WHERE id = ${record.id}`.execute(harness.store.db)).rows).toEqual(
      live,
    );
  });

  test('a graceful stop writes a held run whole (parked, due) and answers no one wrongly', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Spin', 'scriptNode', { code: 'const end = Date.now() + 1500; while (Date.now() < end) {} return 1;' })
        .edge('In', 'Spin')
        .process({ organization_id: org }),
    );
    const reply = harness
      .call(engineHttp.testProcess, { params: { processId: process.id }, query: { waitSeconds: '3' }, body: {} }, actor)
      .then(
        (r) => r,
        (error: unknown) => error,
      );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      Number(
        (
          await sql<{
            n: string;
          }>`SELECT count(*) AS n FROM events WHERE metadata->>'processId' = ${process.id} AND stream_id LIKE 'execution-%'`.execute(
            harness.store.db,
          )
        ).rows[0]!.n,
      ),
    ).toBe(0);
    await harness.engine.runtime.engine.stop();
    const { rows } = await sql<{ type: string }>`
      SELECT type FROM events WHERE metadata->>'processId' = ${process.id} AND stream_id LIKE 'execution-%' ORDER BY position`.execute(
      harness.store.db,
    );
    expect(rows.map((row) => row.type)).toEqual(expect.arrayContaining(['ExecutionStarted', 'ExecutionParked']));
    const answered = (await reply) as { status?: number; body?: { execution_id?: string; id?: string } };
    // Whatever the answer, an id it names is on record.
    const id = answered.body?.execution_id ?? answered.body?.id;
    if (id) expect((await typesOf(id)).length).toBeGreaterThan(0);
  });
});
