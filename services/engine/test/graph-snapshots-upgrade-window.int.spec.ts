import { engineHttp, type ExecutionRecord, type ExecutionRequest } from '@weft/contracts';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/**
 * An engine of the previous version may still run during an upgrade (docs/engine.md). It knows
 * `graph_snapshot` (inline) and not `graph_snapshot_id`. An execution this version accepted and
 * the previous version started must show the graph it ran with: an accepted row names no graph,
 * and the start the previous version writes is read from the row.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('graph snapshots while the previous version still runs (%s)', (mode) => {
  let api: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    api = await startEngineHarness(mode, { consume: false });
  });
  afterAll(() => api.close());

  const process = () =>
    api.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Add', 'scriptNode', { code: 'return { total: input.In.n + 1 };' })
        .node('Out', 'outputNode')
        .edge('In', 'Add')
        .edge('Add', 'Out')
        .process({ organization_id: org }),
    );
  const read = async (id: string): Promise<ExecutionRecord> =>
    (await api.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
  const row = async (id: string) =>
    (
      await sql<{ graph_snapshot: unknown; graph_snapshot_id: string | null }>`
        SELECT graph_snapshot, graph_snapshot_id FROM engine_executions WHERE id = ${id}`.execute(api.store.db)
    ).rows[0]!;

  /** What a reader sees of the graph: the graph, and the keys of the Add node's input (labels come from the graph). */
  const shown = (record: ExecutionRecord) => ({
    graph_snapshot: record.graph_snapshot,
    addInputKeys: Object.keys(record.node_states.find((n) => n.node_name === 'Add')?.input_data ?? {}),
  });

  /** Accepted (queued, no engine consumes), then started and run to its end by this engine. */
  const acceptThenRun = async (): Promise<{ id: string; record: ExecutionRecord }> => {
    const p = await process();
    const accepted = await api.call(
      engineHttp.testProcess,
      { params: { processId: p.id }, query: { waitSeconds: '0' }, body: { n: 1 } },
      actor,
    );
    const id = (accepted.body as { execution_id: string }).execution_id;
    // Queued: no graph yet, none named, and the record shows an empty one.
    expect(await row(id)).toEqual({ graph_snapshot: null, graph_snapshot_id: null });
    expect((await read(id)).graph_snapshot).toEqual({ nodes: [], edges: [] });
    const request: ExecutionRequest = {
      executionId: id,
      processId: p.id,
      organizationId: org,
      inputData: { n: 1 },
      triggeredByUserId: actor.userId,
      source: 'test',
      requestedAt: new Date().toISOString(),
    };
    await api.engine.runtime.engine.start(request);
    await waitUntil(async () => (await read(id)).status === 'completed', 30_000);
    const record = await read(id);
    expect(record.graph_snapshot.nodes).toHaveLength(3);
    // Labels key the node inputs while the graph is known.
    expect(Object.keys(record.node_states.find((n) => n.node_name === 'Add')!.input_data as object)).toEqual(['In']);
    return { id, record };
  };

  test('accepted by this version, started by the previous one: the record shows the graph it ran with', async () => {
    const { id, record } = await acceptThenRun();
    // What the previous version's ExecutionStarted upsert leaves on a row this version accepted:
    // the graph inline, no id (it does not know the column).
    await sql`UPDATE engine_executions
      SET graph_snapshot = (SELECT snapshot FROM engine_graph_snapshots WHERE id = graph_snapshot_id),
          graph_snapshot_id = NULL
      WHERE id = ${id}`.execute(api.store.db);
    expect(shown(await read(id))).toEqual(shown(record));
    expect(await read(id)).toEqual(record);
  });
});
