import { sql } from 'kysely';
import { catalogHttp, engineHttp, type ExecutionRecord } from '@weft/contracts';
import { graphAdding } from './fixtures/adding-graph.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * Every execution of a process revision runs the same graph: the rows name it by id and it is
 * stored once (engine_graph_snapshots), while each record still shows the graph it ran with.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('graph snapshots stored once per graph (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  const run = async (processId: string): Promise<ExecutionRecord> => {
    const reply = await harness.call(engineHttp.testProcess, { params: { processId }, body: { n: 1 } }, actor);
    expect(reply.status).toBe(200);
    return reply.body as ExecutionRecord;
  };
  const read = async (id: string): Promise<ExecutionRecord> =>
    (await harness.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
  const rowsOf = async (processId: string) =>
    (
      await sql<{ id: string; graph_snapshot: unknown; graph_snapshot_id: string | null }>`
        SELECT id, graph_snapshot, graph_snapshot_id FROM engine_executions WHERE process_id = ${processId}`.execute(
        harness.store.db,
      )
    ).rows;
  const storedGraphs = async (ids: readonly string[]) =>
    (
      await sql<{ id: string; snapshot: unknown }>`
        SELECT id, snapshot FROM engine_graph_snapshots WHERE id IN (${sql.join([...ids])})`.execute(harness.store.db)
    ).rows;

  test('runs of one revision share one stored graph; an edit stores the next; reads show each run its own', async () => {
    const process = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    const first = await Promise.all([run(process.id), run(process.id), run(process.id)]);
    const before = await rowsOf(process.id);
    expect(before).toHaveLength(3);
    expect(before.every((row) => row.graph_snapshot === null)).toBe(true);
    expect(new Set(before.map((row) => row.graph_snapshot_id)).size).toBe(1);
    const [stored] = await storedGraphs([before[0]!.graph_snapshot_id!]);
    expect(stored?.snapshot).toEqual(first[0].graph_snapshot);
    for (const record of first) expect(await read(record.id)).toEqual(record);

    const edited = graphAdding(10).process({ organization_id: org });
    const updated = await harness.bus.request(
      catalogHttp.updateProcess,
      { params: { id: process.id }, query: {}, body: { nodes: edited.nodes, edges: edited.edges }, headers: {} },
      { actor, timeoutMs: 30_000 },
    );
    expect(updated.status).toBe(200);
    const after = await run(process.id);
    expect(after.output_data).toEqual({ Out: { total: 11 } });
    const ids = new Set((await rowsOf(process.id)).map((row) => row.graph_snapshot_id!));
    expect(ids.size).toBe(2);
    expect(await storedGraphs([...ids])).toHaveLength(2);
    // Each record keeps the graph it ran with.
    expect((await read(first[0].id)).graph_snapshot).toEqual(first[0].graph_snapshot);
    expect((await read(after.id)).graph_snapshot).toEqual(after.graph_snapshot);
    expect(after.graph_snapshot).not.toEqual(first[0].graph_snapshot);
  });

  test('a row written before graphs were stored once shows its own; one with both shows the stored graph', async () => {
    const process = await harness.catalog.add(graphAdding(2).process({ organization_id: org }));
    const [old, both] = [await run(process.id), await run(process.id)];
    const inline = { nodes: [{ id: 'kept', type: 'inputNode', config: { label: 'Kept' } }], edges: [] };
    // As an older version wrote it: the graph in the row, no id.
    await sql`UPDATE engine_executions SET graph_snapshot = ${JSON.stringify(inline)}::jsonb, graph_snapshot_id = NULL
      WHERE id = ${old.id}`.execute(harness.store.db);
    // Accepted (placeholder graph inline) before the upgrade, started after it: the id wins.
    await sql`UPDATE engine_executions SET graph_snapshot = '{"nodes": [], "edges": []}'::jsonb
      WHERE id = ${both.id}`.execute(harness.store.db);
    expect((await read(old.id)).graph_snapshot).toEqual(inline);
    expect((await read(both.id)).graph_snapshot).toEqual(both.graph_snapshot);
  });
});
