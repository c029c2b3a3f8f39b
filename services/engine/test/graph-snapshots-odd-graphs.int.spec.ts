import { engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { sql } from 'kysely';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { canonicalJson, graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { engineTables } from './support/engine-tables.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * Graphs with odd keys and numbers, shared by two organizations: the id the engine computes from
 * its in-memory graph is the one a rebuild computes from the jsonb it reads back, each
 * organization reads its own record, and the live tables equal a rebuild.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

const nested = (depth: number): unknown => (depth === 0 ? { leaf: [1, null, 'x'] } : { d: nested(depth - 1) });

/** Keys and numbers whose order or text differs between JavaScript, UTF-8 and jsonb. */
const ODD: Record<string, unknown> = {
  '': 'empty key',
  z: 1,
  é: 2,
  '\uffff': 'U+FFFF sorts after an astral char by code units, before it by UTF-8 bytes',
  '😀': 'astral',
  'e\u0301': 'combining',
  toJSON: 'a key, not a method',
  constructor: { prototype: 1 },
  numbers: [1e21, 5e-324, 1.7976931348623157e308, 0.1, 2 ** 53 + 1, 1e-7, -1.5e-10, 123456789012345680000],
  negativeZero: -0,
  text: 'quote " backslash \\ line\u2028sep control\u0001 tab\t',
  deep: nested(55),
  big: 'x'.repeat(200_000),
  ['__proto__']: { polluted: true },
};

describe.each(modes)('odd graphs shared by two organizations (%s)', (mode) => {
  let harness: EngineHarness;
  const orgA = crypto.randomUUID();
  const orgB = crypto.randomUUID();

  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  const graph = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('S', 'scriptNode', { code: 'return { ok: input.In.n };', extra: ODD })
    .node('Out', 'outputNode')
    .edge('In', 'S')
    .edge('S', 'Out');

  const run = async (process: ProcessRecord, org: string): Promise<ExecutionRecord> => {
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, query: { waitSeconds: '60' }, body: { n: 1 } },
      actorOf(org),
    );
    return reply.body as ExecutionRecord;
  };

  test('same id for both, each reads its own, the stored graph is the answer’s, rebuild equals live', async () => {
    const a = await harness.catalog.add(graph.process({ organization_id: orgA }));
    const b = await harness.catalog.add(graph.process({ organization_id: orgB }));
    const [ra, rb] = [await run(a, orgA), await run(b, orgB)];
    expect(ra.status).toBe('completed');
    expect(rb.status).toBe('completed');
    // The odd config reached the engine whole (nothing stripped by the catalog).
    const extra = ra.graph_snapshot.nodes.find((n) => n.type === 'scriptNode')!.config.extra as Record<string, unknown>;
    expect(Object.keys(extra).sort()).toEqual(Object.keys(ODD).sort());
    expect(Object.prototype.hasOwnProperty.call(extra, '__proto__')).toBe(true);
    const rows = (
      await sql<{ id: string; graph_snapshot_id: string }>`
        SELECT id, graph_snapshot_id FROM engine_executions WHERE id IN (${ra.id}, ${rb.id})`.execute(harness.store.db)
    ).rows;
    // In-memory id == id of the graph as read back (the answer went through jsonb key order only).
    for (const row of rows) {
      const record = row.id === ra.id ? ra : rb;
      expect(row.graph_snapshot_id).toBe(graphSnapshotId(JSON.parse(JSON.stringify(record.graph_snapshot))));
    }
    const stored = (
      await sql<{ id: string; snapshot: unknown }>`
        SELECT id, snapshot FROM engine_graph_snapshots WHERE id IN (${sql.join(rows.map((r) => r.graph_snapshot_id))})`.execute(
        harness.store.db,
      )
    ).rows;
    // Identical graphs in two organizations: one stored row, equal to what each answer shows.
    expect(ra.graph_snapshot).toEqual(rb.graph_snapshot);
    expect(new Set(rows.map((r) => r.graph_snapshot_id)).size).toBe(1);
    expect(stored).toHaveLength(1);
    expect(canonicalJson(stored[0]!.snapshot)).toBe(canonicalJson(ra.graph_snapshot));
    // Each organization reads its own record, and not the other's.
    expect((await harness.call(engineHttp.getExecution, { params: { id: ra.id } }, actorOf(orgA))).body).toEqual(ra);
    expect((await harness.call(engineHttp.getExecution, { params: { id: rb.id } }, actorOf(orgB))).body).toEqual(rb);
    const foreign = await harness.call(engineHttp.getExecution, { params: { id: ra.id } }, actorOf(orgB)).then(
      (r) => r.status,
      (e: { status?: number }) => e.status,
    );
    expect(foreign).toBe(404);
    const live = await engineTables(harness.store.db);
    await rebuildProjection(harness.store, executionsProjection);
    expect(await engineTables(harness.store.db)).toEqual(live);
  });
});
