import type { Bus } from '@weft/bus';
import { catalogHttp, catalogInternal, engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { graphAdding } from './fixtures/adding-graph.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * The engine keeps each process per revision: runs of an unchanged process do not ask the catalog
 * again, and an edit or a delete is seen by the very next run.
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

  beforeAll(async () => {
    harness = await startEngineHarness(mode, {}, { engineBus: countingLoads, onlyWriter });
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
  });

  test('a deleted process answers 404 at the next run, though it was cached', async () => {
    const process: ProcessRecord = await harness.catalog.add(graphAdding(1).process({ organization_id: org }));
    expect((await run(process.id)).status).toBe(200);
    expect((await catalogCall(catalogHttp.deleteProcess, process.id)).status).toBe(204);
    await expect(run(process.id)).rejects.toMatchObject({ status: 404 });
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
