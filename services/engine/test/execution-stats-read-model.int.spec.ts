import {
  catalogHttp,
  engineHttp,
  type ExecutionEvent,
  type ExecutionRecord,
  type ProcessRecord,
} from '@weft/contracts';
import { rebuildProjection, type Db } from '@weft/event-store';
import { sql } from 'kysely';
import { postgresExecutionCommit } from '../src/adapters/postgres/execution-commit.js';
import { snapshotOf } from '../src/domain/graph/execution-graph.js';
import { graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';
import { durationBucket, durationBucketSql } from '../src/projections/duration-histogram.js';
import {
  executionStats,
  executionStatsAtRevision,
  findExecution,
  statsAtRevisionStatement,
} from '../src/projections/execution-queries.js';
import { processRevisions } from '../src/adapters/postgres/process-revisions.js';
import { EXECUTION_STATS_FUNCTION } from '../src/projections/execution-stats-function-migration.js';
import { backfillExecutionStats } from '../src/projections/execution-stats-migration.js';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { expectSameStats, scannedExecutionStats } from './support/execution-stats-scan.js';
import { waitUntil } from './support/wait-until.js';

/**
 * GET /processes/execution-stats reads projected tables, not every execution. Checked against
 * the scan it replaced (the oracle), for executions the engine ran and for events written in
 * batches; the tables are the same after a rebuild from the events and after the migration's
 * backfill from the execution rows.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];
const STATS_TABLES = ['engine_execution_durations', 'engine_execution_failed_nodes', 'engine_execution_errors'];

/** The statistics rows of these processes, each as its text form, per table. */
async function statsTables(db: Db, processIds: readonly string[]): Promise<Record<string, string[]>> {
  const snapshot: Record<string, string[]> = {};
  for (const table of STATS_TABLES) {
    const { rows } = await sql<{ line: string }>`
      SELECT t::text AS line FROM ${sql.table(table)} t WHERE process_id = ANY(${[...processIds]}::uuid[]) ORDER BY 1`.execute(
      db,
    );
    snapshot[table] = rows.map((row) => row.line);
  }
  return snapshot;
}

describe.each(modes)('execution statistics are a projected read model (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  test("the backfill's SQL puts every duration in the bucket the engine does", async () => {
    const samples = Array.from({ length: 300 }, (_, i) => i - 5);
    for (let bit = 7; bit <= 52; bit++) samples.push(2 ** bit - 1, 2 ** bit, 2 ** bit + 1, Math.floor(2 ** bit * 1.6));
    const { rows } = await sql<{ bucket: number }>`
      SELECT ${durationBucketSql(sql`ms`)} AS bucket
      FROM unnest(string_to_array(${samples.join(',')}, ',')::bigint[]) WITH ORDINALITY AS s(ms, i) ORDER BY i`.execute(
      harness.store.db,
    );
    expect(rows.map((row) => Number(row.bucket))).toEqual(samples.map(durationBucket));
  });

  test('executions the engine ran: the answer of the scan, and the same after a rebuild', async () => {
    // Fails at Check or at Second by input, with a message longer than a statistics row holds,
    // waits past the timeout, or completes; a failure is retried once.
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Check', 'scriptNode', {
        code: `const k = input.In.kind;
          if (k === 'a' || k === 'b') throw new Error('bad ' + k);
          if (k === 'long') throw new Error('x'.repeat(700) + ' end');
          return k;`,
      })
      .node('Second', 'scriptNode', { code: `if (input.In.kind === 'c') throw new Error('second'); return 1;` })
      .node('Slow?', 'conditionalNode', {
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["kind"]}}', operator: 'eq', right: 'slow' }],
      })
      .node('Pause', 'waitNode', { seconds: 60 })
      .node('Out', 'outputNode')
      .edge('In', 'Check')
      .edge('Check', 'Second')
      .edge('Second', 'Slow?')
      .edge('Slow?', 'Pause', 'true')
      .edge('Slow?', 'Out', 'false');
    const process = await harness.catalog.add(g.process({ organization_id: org, max_retries: 1, timeout_seconds: 5 }));
    const run = (kind: string, waitSeconds = '60') =>
      harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, query: { waitSeconds }, body: { kind } },
        actor,
      );
    const cancelled = ((await run('slow', '0')).body as { execution_id: string }).execution_id;
    await waitUntil(
      async () =>
        (await findExecution(harness.store.db, cancelled))?.node_states.find((n) => n.node_name === 'Pause')?.status ===
        'running',
    );
    expect((await harness.call(engineHttp.cancelExecution, { params: { id: cancelled } }, actor)).status).toBe(200);
    const kinds = ['ok', 'a', 'ok', 'b', 'a', 'c', 'long', 'ok', 'slow', 'ok', 'a'];
    const records: ExecutionRecord[] = [];
    for (const kind of kinds) records.push((await run(kind)).body as ExecutionRecord);
    expect(records.map((r) => r.status)).toEqual([
      'completed',
      'failed',
      'completed',
      'failed',
      'failed',
      'failed',
      'failed',
      'completed',
      'timeout',
      'completed',
      'failed',
    ]);
    expect(records[1]?.attempt).toBe(2);

    const before = await executionStats(harness.store.db, process.id);
    expectSameStats(before, await scannedExecutionStats(harness.store.db, process.id));
    expect(before).toMatchObject({ total_runs: 12, completed: 4, failed: 6, timeout: 1, cancelled: 1 });
    expect(before.failure_breakdown.by_node.map((n) => [n.node_name, n.count])).toEqual([
      ['Check', 5],
      ['Second', 1],
    ]);
    expect(before.failure_breakdown.by_error.find((e) => e.error_message?.endsWith(' end'))?.error_message).toBe(
      `Check: script failed: ${'x'.repeat(700)} end`,
    );
    const tables = await statsTables(harness.store.db, [process.id]);
    expect(tables.engine_execution_failed_nodes).toHaveLength(2);

    await rebuildProjection(harness.store, executionsProjection);
    expect(await executionStats(harness.store.db, process.id)).toEqual(before);
    expect(await statsTables(harness.store.db, [process.id])).toEqual(tables);
  });

  test('events in batches, resumed, retried and queued-then-cancelled: the answer of the scan, backfill and rebuild alike', async () => {
    const process: ProcessRecord = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('A', 'scriptNode', { code: 'return 1;' })
        .node('B', 'scriptNode', { code: 'return 2;' })
        .edge('In', 'A')
        .edge('A', 'B')
        .process({ organization_id: org }),
    );
    const fast = crypto.randomUUID();
    const t0 = Date.parse('2025-01-01T00:00:00.000Z');
    const at = (ms: number): string => new Date(t0 + ms).toISOString();
    const started = (executionId: string, processId: string): ExecutionEvent => ({
      type: 'ExecutionStarted',
      data: {
        executionId,
        processId,
        organizationId: org,
        processRevision: process.revision,
        triggerNodeId: process.nodes[0]!.id,
        inputData: {},
        // As a start stored before schema version 3 carried it (upcast: with its id).
        graphSnapshot: snapshotOf(process),
        graphSnapshotId: graphSnapshotId(snapshotOf(process)),
        triggeredByUserId: null,
        source: 'test',
        timeoutSeconds: 0,
        maxRetries: 1,
        errorWebhookUrl: null,
        startedAt: at(0),
      },
    });
    const failedAt = (node: 'A' | 'B', name: string, message: string, seconds: number, attempt = 1) =>
      ({
        type: 'ExecutionFailed',
        data: {
          errorMessage: message,
          failedNode: { id: process.nodes[node === 'A' ? 1 : 2]!.id, name, type: 'scriptNode', error: message },
          attempt,
          completedAt: at(seconds * 1000),
          durationSeconds: seconds,
        },
      }) as const;
    const completed = (seconds: number) =>
      ({
        type: 'ExecutionCompleted',
        data: { outputData: {}, completedAt: at(seconds * 1000), durationSeconds: seconds },
      }) as const;
    const long = `${'é'.repeat(499)}😀${'y'.repeat(100)}`;
    type Step = { type: string; data: Record<string, unknown> };
    // Each execution: its events per commit (a later commit reads the row back from the table).
    const executions: { processId: string; commits: Step[][] }[] = [
      { processId: process.id, commits: [[completed(0.012)]] },
      { processId: process.id, commits: [[completed(3 * 86_400.5)]] },
      { processId: process.id, commits: [[failedAt('A', 'A', 'A: boom', 0.5)]] },
      { processId: process.id, commits: [[failedAt('A', 'A renamed', 'A: boom', 40_000.25)]] },
      { processId: process.id, commits: [[failedAt('B', 'B', long, 7.777)]] },
      { processId: process.id, commits: [[failedAt('B', 'B', long, 0.3)]] },
      {
        processId: process.id,
        commits: [
          [
            {
              type: 'ExecutionRetryScheduled',
              data: { attempt: 2, failedNodeId: process.nodes[1]!.id, error: 'A: flaky', retryAt: at(10) },
            },
          ],
          [failedAt('A', 'A', 'A: flaky', 1.25, 2)],
        ],
      },
      {
        processId: process.id,
        commits: [[{ type: 'ExecutionResumed', data: { runningNodeIds: [], resumedAt: at(5000) } }], [completed(900)]],
      },
      {
        processId: process.id,
        commits: [
          [
            {
              type: 'ExecutionTimedOut',
              data: { errorMessage: 'timed out', completedAt: at(60_000), durationSeconds: 60 },
            },
          ],
        ],
      },
      {
        processId: process.id,
        commits: [
          [
            {
              type: 'ExecutionCancelled',
              data: { cancelledByUserId: null, completedAt: at(2000), durationSeconds: 2 },
            },
          ],
        ],
      },
      // All under 128 ms: the p95 is exactly percentile_cont's.
      ...[0.004, 0.009, 0.017, 0.031, 0.1, 0.127, 0.06].map((seconds, i) => ({
        processId: fast,
        commits: [[i % 2 === 0 ? completed(seconds) : failedAt('A', 'A', `A: ${i}`, seconds)]],
      })),
    ];
    const ids = executions.map(() => crypto.randomUUID());
    const metadataOf = (executionId: string, processId: string) => ({
      organizationId: org,
      processId,
      correlationId: executionId,
    });
    // A fresh commit function (no row cache) per round: rows already written are read back.
    const commit = () => postgresExecutionCommit(harness.store, { owner: 'stats-test', leaseMs: 600_000 });
    // Round 0: every stream starts in one commit, with its first events (one batch for all).
    await commit()(
      executions.map(({ processId, commits }, i) => ({
        streamId: `execution-${ids[i]}`,
        events: [started(ids[i]!, processId), ...(commits[0] ?? [])].map((step) => ({
          type: step.type,
          data: { ...step.data, executionId: ids[i] },
          metadata: metadataOf(ids[i]!, processId),
        })),
        expectedVersion: 'no_stream' as const,
      })),
    );
    // A queued execution cancelled before it started.
    const queued = crypto.randomUUID();
    await commit()([
      {
        streamId: `execution-${queued}`,
        events: [
          {
            type: 'ExecutionAccepted',
            data: {
              executionId: queued,
              processId: process.id,
              organizationId: org,
              triggerNodeId: process.nodes[0]!.id,
              triggeredByUserId: null,
              source: 'test',
              acceptedAt: at(0),
            },
            metadata: metadataOf(queued, process.id),
          },
        ],
        expectedVersion: 'no_stream',
      },
    ]);
    await commit()([
      {
        streamId: `execution-${queued}`,
        events: [
          {
            type: 'ExecutionCancelled',
            data: { executionId: queued, cancelledByUserId: null, completedAt: at(1500), durationSeconds: 1.5 },
            metadata: metadataOf(queued, process.id),
          },
        ],
        expectedVersion: 1,
      },
    ]);
    // Round 1: the rest, each stream's events at the version it reached.
    const later = executions.flatMap(({ processId, commits }, i) =>
      commits.length > 1
        ? [
            {
              streamId: `execution-${ids[i]}`,
              events: commits[1]!.map((step) => ({
                type: step.type,
                data: { ...step.data, executionId: ids[i] },
                metadata: metadataOf(ids[i]!, processId),
              })),
              expectedVersion: 1 + (commits[0]?.length ?? 0),
            },
          ]
        : [],
    );
    await commit()(later);

    const processes = [process.id, fast];
    const live = await Promise.all(processes.map((id) => executionStats(harness.store.db, id)));
    for (const [i, id] of processes.entries()) {
      expectSameStats(live[i]!, await scannedExecutionStats(harness.store.db, id));
    }
    expect(live[1]?.p95_duration_seconds).toBe(
      (await scannedExecutionStats(harness.store.db, fast)).p95_duration_seconds,
    );
    expect(live[0]).toMatchObject({ total_runs: 11, completed: 3, failed: 5, timeout: 1, cancelled: 2 });
    expect(live[0]?.failure_breakdown.by_node).toEqual([
      { node_id: process.nodes[1]!.id, node_name: 'A renamed', count: 3 },
      { node_id: process.nodes[2]!.id, node_name: 'B', count: 2 },
    ]);
    expect(live[0]?.failure_breakdown.by_error).toContainEqual({ error_message: long, count: 2 });
    const tables = await statsTables(harness.store.db, processes);

    // The migration's backfill from the execution rows gives the same tables.
    for (const table of STATS_TABLES) {
      await sql`DELETE FROM ${sql.table(table)} WHERE process_id = ANY(${processes}::uuid[])`.execute(harness.store.db);
    }
    for (const id of processes) await backfillExecutionStats(harness.store.db, id);
    expect(await statsTables(harness.store.db, processes)).toEqual(tables);

    await rebuildProjection(harness.store, executionsProjection);
    expect(await statsTables(harness.store.db, processes)).toEqual(tables);
    expect(await Promise.all(processes.map((id) => executionStats(harness.store.db, id)))).toEqual(live);
  });

  test('read with the revision in one statement: the same answer at the revision, nothing read at another', async () => {
    const db = harness.store.db;
    const g = new GraphBuilder().node('In', 'inputNode').node('Out', 'outputNode').edge('In', 'Out');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    const stats = () => harness.call(engineHttp.executionStats, { params: { processId: process.id } }, actor);
    const run = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process.id }, query: {}, body: { n: 1 } },
      actor,
    );
    // It fails (the input node has no trigger type): the breakdowns then have rows to compare.
    expect(run).toMatchObject({ status: 200, body: { status: 'failed' } });
    const revision = (await processRevisions(db, [process.id])).get(process.id) as number;
    expect(revision).toBeGreaterThan(0);
    const expected = await executionStats(db, process.id);
    expect(expected).toMatchObject({ total_runs: 1, failed: 1 });
    expect(expected.failure_breakdown.by_error).toHaveLength(1);
    expect(await executionStatsAtRevision(db, process.id, revision)).toEqual(expected);
    expect(await executionStatsAtRevision(db, process.id, revision + 1)).toBeUndefined();

    // At another revision the statistics function is never run (the scan under the gate has no loop).
    const functionLoops = async (at: number): Promise<number[]> => {
      const { rows } = await sql<{
        'QUERY PLAN': unknown;
      }>`EXPLAIN (ANALYZE, FORMAT JSON) ${statsAtRevisionStatement(process.id, at)}`.execute(db);
      const loops: number[] = [];
      const walk = (node: Record<string, unknown>): void => {
        if (node['Node Type'] === 'Function Scan') loops.push(Number(node['Actual Loops']));
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
      };
      const plan = rows[0]?.['QUERY PLAN'];
      walk(((typeof plan === 'string' ? JSON.parse(plan) : plan) as { Plan: Record<string, unknown> }[])[0]!.Plan);
      return loops;
    };
    expect(await functionLoops(revision)).toEqual([1]);
    expect(await functionLoops(revision + 1)).toEqual([0]);

    // Through the API: the answer is the same; an edit is seen by the next call; another
    // organization and a deleted process get 404.
    expect(await stats()).toEqual({ status: 200, body: expected });
    const edited = await harness.bus.request(
      catalogHttp.updateProcess,
      { params: { id: process.id }, query: {}, headers: {}, body: { name: 'renamed' } },
      { actor, timeoutMs: 30_000 },
    );
    expect(edited.status).toBe(200);
    expect(await stats()).toEqual({ status: 200, body: expected });
    const stranger = await harness
      .call(engineHttp.executionStats, { params: { processId: process.id } }, actorOf(crypto.randomUUID()))
      .catch((error: { status?: number }) => error);
    expect(stranger).toMatchObject({ status: 404 });
    const deleted = await harness.bus.request(
      catalogHttp.deleteProcess,
      { params: { id: process.id }, query: {}, headers: {}, body: undefined },
      { actor, timeoutMs: 30_000 },
    );
    expect(deleted.status).toBe(204);
    expect(await stats().catch((error: { status?: number }) => error)).toMatchObject({ status: 404 });
  });

  test('the read is a function planned generically; a function of another shape fails the call instead of answering zeros', async () => {
    const db = harness.store.db;
    const { rows } = await sql<{ config: string[] | null }>`
      SELECT proconfig AS config FROM pg_proc
      WHERE proname = ${EXECUTION_STATS_FUNCTION} AND pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`.execute(
      db,
    );
    expect(rows.map((row) => row.config)).toEqual([['plan_cache_mode=force_generic_plan']]);

    // As an engine of this version would meet a function another version created (rolled back).
    const rolledBack = new Error('rolled back');
    const failure = db
      .transaction()
      .execute(async (trx) => {
        await sql`DROP FUNCTION ${sql.raw(EXECUTION_STATS_FUNCTION)}(uuid)`.execute(trx);
        await sql`
          CREATE FUNCTION ${sql.raw(EXECUTION_STATS_FUNCTION)}(p uuid) RETURNS TABLE (counts json, o_total_ms float8)
          LANGUAGE sql AS $$ SELECT '{"completed": 5}'::json, 1.0::float8 $$`.execute(trx);
        const answer = await executionStats(trx, crypto.randomUUID()).catch((error: Error) => error);
        throw answer instanceof Error ? answer : rolledBack;
      })
      .catch((error: Error) => error);
    expect((await failure).message).toMatch(/answered a row without the columns o_counts, o_histogram/);
    // The real function is back: a process without executions answers zeros.
    expect(await executionStats(db, crypto.randomUUID())).toMatchObject({ total_runs: 0, p95_duration_seconds: 0 });
  });
});
