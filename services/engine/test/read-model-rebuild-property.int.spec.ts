import { engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { rebuildProjection, type Db } from '@weft/event-store';
import { sql } from 'kysely';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { openDatabase } from '@weft/event-store';
import { engineTables } from './support/engine-tables.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { testDatabaseUrl } from './support/test-services.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Invariant 3 as a property: whatever the workload (random graphs of scripts returning nulls,
 * objects and errors, loops whose iterations overwrite each other, branches, retries, cancels),
 * every read-model table after a rebuild from the events is the same, row by row and byte by
 * byte (SQL NULL and JSON null told apart), as the engine left it live.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];
const SEEDS = (process.env.WEFT_TEST_PROPERTY_SEEDS ?? '1,2,3').split(',').map(Number);

/** mulberry32: a small seeded PRNG, so a failing seed can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VALUES = ['null', '{ x: n }', '[n, null]', '"s" + n', 'n', 'true', '{ nested: { deep: [n] } }', 'undefined'];

/** A random process: a chain of scripts, loops (body outputs alternate object/null), branches and outputs. */
function randomProcess(next: () => number, organizationId: string): ProcessRecord {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const g = new GraphBuilder().node('In', 'inputNode', { triggerType: 'manual' });
  let tail = 'In';
  let tailHandle = 'output';
  const steps = 1 + Math.floor(next() * 4);
  for (let i = 1; i <= steps; i++) {
    const kind = pick(['script', 'script', 'loop', 'branch'] as const);
    if (kind === 'script') {
      const fails = next() < 0.3 ? `if (n % 4 === ${i % 4}) throw new Error("boom " + n);` : '';
      const value = pick(VALUES);
      g.node(`S${i}`, 'scriptNode', { code: `const n = (input.In ?? {}).n ?? 0; ${fails} return ${value};` });
      g.edge(tail, `S${i}`, tailHandle);
      [tail, tailHandle] = [`S${i}`, 'output'];
    } else if (kind === 'loop') {
      g.node(`Each${i}`, 'loopNode', { items: '{{input["In"]["items"]}}' });
      g.node(`Body${i}`, 'scriptNode', {
        code: `const item = input["Each${i}"].item; const n = item; return item % 2 === 1 ? { x: item } : ${pick(VALUES)};`,
      });
      g.edge(tail, `Each${i}`, tailHandle).edge(`Each${i}`, `Body${i}`, 'start');
      [tail, tailHandle] = [`Each${i}`, 'output'];
    } else {
      g.node(`C${i}`, 'conditionalNode', {
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["n"]}}', operator: 'gt', right: Math.floor(next() * 10) }],
      });
      g.node(`Alt${i}`, 'outputNode', next() < 0.5 ? { fields: { n: '{{input["In"]["n"]}}' } } : {});
      g.edge(tail, `C${i}`, tailHandle).edge(`C${i}`, `Alt${i}`, 'false');
      [tail, tailHandle] = [`C${i}`, 'true'];
    }
  }
  g.node('Out', 'outputNode').edge(tail, 'Out', tailHandle);
  return g.process({ organization_id: organizationId, max_retries: next() < 0.3 ? 1 : 0 });
}

describe.each(modes)('read models rebuilt from random workloads are identical (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  const run = (processId: string, body: unknown, waitSeconds = '60') =>
    harness.call(engineHttp.testProcess, { params: { processId }, query: { waitSeconds }, body }, actor);

  test.each(SEEDS)('seed %i', async (seed) => {
    const next = random(seed);
    // The reported case first: a loop body's output {x:1}, then null.
    const loop = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Body', 'scriptNode', { code: 'return input.Each.item === 1 ? { x: 1 } : null;' })
      .edge('In', 'Each')
      .edge('Each', 'Body', 'start');
    const processes = await Promise.all(
      [loop.process({ organization_id: org }), ...Array.from({ length: 6 }, () => randomProcess(next, org))].map(
        (process) => harness.catalog.add(process),
      ),
    );
    const waiting = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Wait', 'waitNode', { seconds: 3600 })
        .edge('In', 'Wait')
        .process({ organization_id: org }),
    );

    const inputs = processes.flatMap((process, index) =>
      Array.from({ length: 3 }, () => ({
        process,
        body:
          index === 0
            ? { items: [1, 2] }
            : {
                n: Math.floor(next() * 10),
                items: Array.from({ length: Math.floor(next() * 4) }, () => Math.floor(next() * 6)),
              },
      })),
    );
    const cancelled = (await run(waiting.id, {}, '0')).body as { execution_id: string };
    const records = (await Promise.all(inputs.map(({ process, body }) => run(process.id, body)))).map(
      (reply) => reply.body as ExecutionRecord,
    );
    await harness.call(engineHttp.cancelExecution, { params: { id: cancelled.execution_id } }, actor);
    expect(records.every((record) => record.status !== 'running')).toBe(true);
    // A completed run's answer (built from the rows its commit wrote, when written whole) is what a read returns.
    for (const record of records.filter(({ status }) => status === 'completed')) {
      const read = await harness.call(engineHttp.getExecution, { params: { id: record.id } }, actor);
      expect(read.body).toEqual(record);
    }
    const body = records[0]?.node_states.find((state) => state.node_name === 'Body');
    expect(body).toMatchObject({ status: 'completed', output_data: null, iterations: 2 });
    const running = async () =>
      Number(
        (
          await sql<{ n: string }>`SELECT count(*) AS n FROM engine_executions WHERE status = 'running'`.execute(
            harness.store.db,
          )
        ).rows[0]?.n,
      );
    await waitUntil(async () => (await running()) === 0, 30_000);
    expect(await running()).toBe(0);

    const live = await engineTables(harness.store.db);
    await rebuildProjection(harness.store, executionsProjection);
    expect(await engineTables(harness.store.db)).toEqual(live);
  });
});

const runningCount = async (db: Db): Promise<number> =>
  Number(
    (await sql<{ n: string }>`SELECT count(*) AS n FROM engine_executions WHERE status = 'running'`.execute(db)).rows[0]
      ?.n,
  );

describe('read models rebuilt after executions moved to another engine are identical (distributed)', () => {
  test('rows an engine read back (no cache) and resumed runs fold like the rebuild', async () => {
    const schema = `test_engine_rebuild_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const org = crypto.randomUUID();
    const actor = actorOf(org);
    // A lease long enough that a loaded machine renews it in time: each run is resumed once, at the handover.
    const leaseMs = 15_000;
    const first = await startEngineHarness('distributed', { leaseMs }, { schema });
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Body', 'scriptNode', { code: 'return input.Each.item === 1 ? { x: 1 } : null;' })
      .node('Wait', 'waitNode', { seconds: 5 })
      .node('After', 'scriptNode', { code: 'return null;' })
      .edge('In', 'Each')
      .edge('Each', 'Body', 'start')
      .edge('Each', 'Wait', 'output')
      .edge('Wait', 'After');
    const process = await first.catalog.add(g.process({ organization_id: org }));
    for (let i = 0; i < 6; i++) {
      await first.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, query: { waitSeconds: '0' }, body: { items: [1, 2] } },
        actor,
      );
    }
    const started = async (db: Db) =>
      Number((await sql<{ n: string }>`SELECT count(*) AS n FROM engine_executions`.execute(db)).rows[0]?.n);
    await waitUntil(async () => (await started(first.store.db)) === 6, 30_000);
    // Stopped mid-wait: the runs are handed over and the next engine resumes them from the tables.
    await first.close();
    const second = await startEngineHarness('distributed', { leaseMs }, { schema });
    try {
      await waitUntil(async () => (await runningCount(second.store.db)) === 0, 30_000);
      expect(await runningCount(second.store.db)).toBe(0);
      const resumed = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM events WHERE type = 'ExecutionResumed'`.execute(second.store.db);
      expect(Number(resumed.rows[0]?.n)).toBe(6);
      const live = await engineTables(second.store.db);
      await rebuildProjection(second.store, executionsProjection);
      expect(await engineTables(second.store.db)).toEqual(live);
    } finally {
      await second.close();
      const database = await openDatabase({ url: testDatabaseUrl(), schema });
      await sql.raw(`DROP SCHEMA "${schema}" CASCADE`).execute(database.db);
      await database.close();
    }
  });
});
