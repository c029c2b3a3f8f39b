import { engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { sql } from 'kysely';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { engineTables } from './support/engine-tables.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/**
 * The engine's memory of committed graphs (ExecutionRowCache.graphSnapshot) never gets ahead
 * of the table, so no row names a graph that is not stored: not after a commit that rolls back
 * (a transient error on the first ExecutionStarted of a new graph), nor a commit refused and
 * re-sent one event group at a time (appendOneByOne), nor rebuilds while the engine runs with a
 * warm memory, also amid commits.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('graph ids the engine remembers vs the table (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  const add = (code: string, wait = false): Promise<ProcessRecord> => {
    const g = new GraphBuilder().node('In', 'inputNode', { triggerType: 'manual' });
    if (wait) g.node('Wait', 'waitNode', { seconds: 1 }).edge('In', 'Wait');
    g.node('S', 'scriptNode', { code }).edge(wait ? 'Wait' : 'In', 'S');
    return harness.catalog.add(g.process({ organization_id: org }));
  };
  const run = (processId: string, waitSeconds = '60') =>
    harness.call(engineHttp.testProcess, { params: { processId }, query: { waitSeconds }, body: { n: 1 } }, actor).then(
      (reply) => reply,
      (error: { status?: number }) => ({ status: error.status ?? -1, body: undefined }),
    );
  const read = async (id: string): Promise<ExecutionRecord> =>
    (await harness.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
  const dangling = async (): Promise<number> =>
    Number(
      (
        await sql<{ n: string }>`SELECT count(*) AS n FROM engine_executions e
          WHERE e.graph_snapshot_id IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM engine_graph_snapshots s WHERE s.id = e.graph_snapshot_id)`.execute(
          harness.store.db,
        )
      ).rows[0]?.n,
    );
  const quiet = () =>
    waitUntil(
      async () =>
        Number(
          (
            await sql<{ n: string }>`SELECT count(*) AS n FROM engine_executions WHERE status = 'running'`.execute(
              harness.store.db,
            )
          ).rows[0]?.n,
        ) === 0,
      30_000,
    );

  test('the first commit naming a new graph rolls back; later runs of it still store and show it', async () => {
    const p = await add('return { ok: 1 };');
    const name = `adv_fail_once_${p.id.replace(/-/g, '')}`;
    for (const statement of [
      `CREATE SEQUENCE ${name}_seq`,
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.metadata->>'processId' = '${p.id}' AND NEW.type = 'ExecutionStarted' AND nextval('${name}_seq') = 1 THEN
           RAISE EXCEPTION 'injected failure' USING ERRCODE = '40P01';
         END IF;
         RETURN NEW;
       END $$`,
      `CREATE TRIGGER ${name} BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION ${name}()`,
    ])
      await sql.raw(statement).execute(harness.database.db);
    const first = await run(p.id);
    expect(first.status).toBeGreaterThanOrEqual(500);
    const second = await run(p.id);
    expect(second.status).toBe(200);
    const record = second.body as ExecutionRecord;
    expect((await read(record.id)).graph_snapshot.nodes).toHaveLength(2);
    expect(await read(record.id)).toEqual(record);
    expect(await dangling()).toBe(0);
  });

  test('a held commit refused and re-sent one by one (appendOneByOne): the start stores its graph', async () => {
    const p = await add('return { ok: 1 };');
    const name = `adv_refuse_${p.id.replace(/-/g, '')}`;
    for (const statement of [
      `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.metadata->>'processId' = '${p.id}' AND NEW.type = 'NodeCompleted' THEN
           RAISE EXCEPTION 'injected refusal' USING ERRCODE = '22023';
         END IF;
         RETURN NEW;
       END $$`,
      `CREATE TRIGGER ${name} BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION ${name}()`,
    ])
      await sql.raw(statement).execute(harness.database.db);
    const reply = await run(p.id);
    const id = (reply.body as ExecutionRecord | undefined)?.id;
    const types = async (executionId: string) =>
      (await harness.store.readStream(`execution-${executionId}`)).map((event) => event.type);
    const executionId =
      id ??
      (await sql<{ id: string }>`SELECT id FROM engine_executions WHERE process_id = ${p.id}`.execute(harness.store.db))
        .rows[0]!.id;
    await quiet();
    expect(await types(executionId)).toContain('ExecutionStarted');
    expect(await types(executionId)).not.toContain('NodeCompleted');
    const record = await read(executionId);
    expect(record.status).toBe('failed');
    expect(record.graph_snapshot.nodes).toHaveLength(2);
    expect(await dangling()).toBe(0);
  });

  test('rebuilds while the engine runs with a warm memory, also amid commits: no row names a missing graph', async () => {
    const processes = await Promise.all([add('return 1;'), add('return 2;', true), add('return 3;')]);
    for (const p of processes) expect((await run(p.id)).status).toBe(200); // remembered now
    await rebuildProjection(harness.store, executionsProjection); // deletes and re-stores the graphs
    const after = await run(processes[0].id); // the engine skips sending the graph it remembers
    expect((await read((after.body as ExecutionRecord).id)).graph_snapshot.nodes).toHaveLength(2);
    // Rebuilds racing commits of remembered graphs.
    const runs = Array.from({ length: 24 }, (_, i) => run(processes[i % 3]!.id, i % 2 === 0 ? '0' : '60'));
    for (let i = 0; i < 3; i++) {
      await rebuildProjection(harness.store, executionsProjection);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all(runs);
    await quiet();
    expect(await dangling()).toBe(0);
    const live = await engineTables(harness.store.db);
    await rebuildProjection(harness.store, executionsProjection);
    expect(await engineTables(harness.store.db)).toEqual(live);
  });
});
