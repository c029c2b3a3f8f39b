import type { Bus } from '@weft/bus';
import { catalogHttp, catalogInternal, engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { createLogger } from '@weft/observability';
import { sql } from 'kysely';
import { graphAdding } from './fixtures/adding-graph.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * The engine keeps each process per revision: runs of an unchanged process do not ask the catalog
 * again, and an edit or a delete is seen by the very next run. Where revisions are read from the
 * database, a synchronous run of a cached process does not read it first: its commit requires the
 * process's stream at the cached revision, and a run that finds it moved is made again afresh.
 */
const cases: [EngineMode, string, boolean][] = [
  ['embedded', 'revision read before each run', false],
  ['distributed', 'revision read before each run', false],
  // Embedded Weft's own database: revisions followed from the store's commits.
  ['embedded', 'revisions known from commits', true],
  ['distributed', 'revisions known from commits', true],
];

describe.each(cases)('processes cached per revision (%s, %s)', (mode, _lookup, onlyWriter) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  /** The process loads the engine asked the catalog for, by process id. */
  const loads = new Map<string, number>();
  const countingLoads = (bus: Bus): Bus =>
    new Proxy(bus, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (key !== 'request') return typeof value === 'function' ? value.bind(target) : value;
        const request: Bus['request'] = (spec, payload, options) => {
          if (spec.subject === catalogInternal.getProcess.subject) {
            const processId = (payload as { processId: string }).processId;
            loads.set(processId, (loads.get(processId) ?? 0) + 1);
          }
          return target.request(spec, payload, options);
        };
        return request;
      },
    });

  /** The engine's log lines: a run whose commit found its process moved ends 'handed over'. */
  const logLines: string[] = [];
  const logger = createLogger('engine-test', { level: 'info', destination: { write: (line) => logLines.push(line) } });
  const movedRuns = (processId: string) =>
    logLines.filter((line) => line.includes('execution handed over') && line.includes(`process-${processId}`)).length;
  const startedRuns = async (processId: string) =>
    (
      await sql<{ n: number }>`SELECT count(*)::int AS n FROM events
        WHERE type = 'ExecutionStarted' AND data->>'processId' = ${processId}`.execute(harness.database.db)
    ).rows[0]!.n;

  beforeAll(async () => {
    harness = await startEngineHarness(mode, { logger }, { engineBus: countingLoads, onlyWriter });
  });
  afterAll(() => harness.close());

  const run = async (processId: string) => {
    const reply = await harness.call(engineHttp.testProcess, { params: { processId }, body: { n: 1 } }, actor);
    return { status: reply.status, record: reply.body as ExecutionRecord };
  };
  const catalogCall = (spec: (typeof catalogHttp)[keyof typeof catalogHttp], id: string, body?: unknown) =>
    harness.bus.request(spec, { params: { id }, query: {}, body, headers: {} }, { actor, timeoutMs: 30_000 });

  test('runs of one revision load the process once; an edit is run at once, and loaded once more', async () => {
    const process = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    for (let i = 0; i < 3; i++) {
      const { status, record } = await run(process.id);
      expect(status).toBe(200);
      expect(record.output_data).toEqual({ Out: { total: 2 } });
    }
    expect(loads.get(process.id)).toBe(1);

    const edited = graphAdding(10).process({ organization_id: org });
    const updated = await catalogCall(catalogHttp.updateProcess, process.id, {
      nodes: edited.nodes,
      edges: edited.edges,
    });
    expect(updated.status).toBe(200);
    const { record } = await run(process.id);
    expect(record.output_data).toEqual({ Out: { total: 11 } });
    expect(record.graph_snapshot.nodes.map((node) => node.id)).toEqual(edited.nodes.map((node) => node.id));
    await run(process.id);
    expect(loads.get(process.id)).toBe(2);
    // Revisions read from the database: the first run after the edit ran the cached revision, its
    // commit found the process moved, and nothing of it is on record; the answer is the rerun's.
    expect(movedRuns(process.id)).toBe(onlyWriter ? 0 : 1);
    expect(await startedRuns(process.id)).toBe(5);
  });

  test('an edit is judged on the new revision: its input node is accepted, the old one refused', async () => {
    const process = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    expect((await run(process.id)).status).toBe(200);
    const oldInput = process.nodes.find((node) => node.type === 'inputNode')!.id;
    const edited = graphAdding(10);
    const shape = edited.process({ organization_id: org });
    expect(
      (await catalogCall(catalogHttp.updateProcess, process.id, { nodes: shape.nodes, edges: shape.edges })).status,
    ).toBe(200);
    const withInput = (inputNodeId: string) =>
      harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, query: { inputNodeId }, body: { n: 1 } },
        actor,
      );
    const reply = await withInput(edited.id('In'));
    expect(reply.status).toBe(200);
    expect((reply.body as ExecutionRecord).output_data).toEqual({ Out: { total: 11 } });
    await expect(withInput(oldInput)).rejects.toMatchObject({ status: 400 });
    expect(await startedRuns(process.id)).toBe(2);
  });

  test('a deleted process answers 404 at the next run, though it was cached', async () => {
    const process: ProcessRecord = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    expect((await run(process.id)).status).toBe(200);
    expect((await catalogCall(catalogHttp.deleteProcess, process.id)).status).toBe(204);
    await expect(run(process.id)).rejects.toMatchObject({ status: 404 });
    expect(movedRuns(process.id)).toBe(onlyWriter ? 0 : 1);
    expect(await startedRuns(process.id)).toBe(1);
  });

  test("another organization's key gets 404 for a cached process", async () => {
    const process = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    expect((await run(process.id)).status).toBe(200);
    await expect(
      harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, body: { n: 1 } },
        actorOf(crypto.randomUUID()),
      ),
    ).rejects.toMatchObject({ status: 404 });
  });
});
