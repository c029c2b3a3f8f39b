import { catalogHttp, engineHttp, engineInternal, type ExecutionRecord } from '@weft/contracts';
import { sql } from 'kysely';
import { graphAdding } from './fixtures/adding-graph.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * Where revisions are read from the database, a synchronous run of a cached process runs that
 * revision without reading first and its commit requires the process's stream at it. Nothing of a
 * run that finds the process moved may be on record, whichever way its start is written (values
 * that go to blob storage first end the hold early), and nothing is decided on the stale record.
 */
describe.each<EngineMode>(['embedded', 'distributed'])('runs of a process that moved (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    // Values over 2 KiB go to blob storage before the event that holds them is appended.
    harness = await startEngineHarness(mode, { eventLimits: { maxEventBytes: 65536, valueInlineMaxBytes: 2048 } });
  });
  afterAll(() => harness.close());

  const startedRuns = async (processId: string) =>
    (
      await sql<{ n: number }>`SELECT count(*)::int AS n FROM events
        WHERE type = 'ExecutionStarted' AND data->>'processId' = ${processId}`.execute(harness.database.db)
    ).rows[0]!.n;
  const catalogCall = (spec: (typeof catalogHttp)[keyof typeof catalogHttp], id: string, body?: unknown) =>
    harness.bus.request(spec, { params: { id }, query: {}, body, headers: {} }, { actor, timeoutMs: 30_000 });
  const test = (processId: string, body: unknown) =>
    harness.call(engineHttp.testProcess, { params: { processId }, body }, actor);

  it('a start whose input goes to blob storage first runs the new revision, and the stale attempt leaves nothing', async () => {
    const process = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    expect((await test(process.id, { n: 1 })).status).toBe(200);
    const edited = graphAdding(10).process({ organization_id: org });
    const updated = await catalogCall(catalogHttp.updateProcess, process.id, {
      nodes: edited.nodes,
      edges: edited.edges,
    });
    expect(updated.status).toBe(200);

    const reply = await test(process.id, { n: 1, big: 'x'.repeat(10_000) });
    expect(reply.status).toBe(200);
    expect((reply.body as ExecutionRecord).output_data).toEqual({ Out: { total: 11 } });
    // Let a stale run that escaped its requirement finish and commit, then count.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await startedRuns(process.id)).toBe(2);
  });

  it('the internal run of a deleted process answers 404, whatever is wrong with its input', async () => {
    const process = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    const run = (inputData: unknown) =>
      harness.bus.request(
        engineInternal.runExecution,
        {
          executionId: '',
          processId: process.id,
          organizationId: org,
          inputData,
          source: 'test',
          requestedAt: new Date().toISOString(),
        },
        { timeoutMs: 30_000 },
      );
    expect((await run({ n: 1 })).status).toBe('completed');
    expect((await catalogCall(catalogHttp.deleteProcess, process.id)).status).toBe(204);
    // A NUL character jsonb cannot store: refused with 400 on a process that exists.
    await expect(run({ n: 'a\u0000b' })).rejects.toMatchObject({ status: 404 });
    expect(await startedRuns(process.id)).toBe(1);
  });
});
