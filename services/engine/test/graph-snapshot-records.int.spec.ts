import {
  engineHttp,
  GRAPH_SNAPSHOT_RECORDED,
  type ExecutionEvent,
  type ExecutionRecord,
  type GraphSnapshotRecordedData,
  type ProcessRecord,
} from '@weft/contracts';
import { rebuildProjection } from '@weft/event-store';
import { sql } from 'kysely';
import { createLogger } from '@weft/observability';
import { BusProcessDirectory } from '../src/adapters/nats/catalog-directory.js';
import { postgresExecutionCommit } from '../src/adapters/postgres/execution-commit.js';
import { PostgresExecutionDeadLetters } from '../src/adapters/postgres/execution-dead-letters.js';
import { UndeliverableRequests } from '../src/application/undeliverable-requests.js';
import { snapshotOf } from '../src/domain/graph/execution-graph.js';
import { graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';
import { findExecution } from '../src/projections/execution-queries.js';
import { executionsProjection } from '../src/projections/executions-projection.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { seedExecution } from './support/seed-execution.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/**
 * Each graph an execution runs is recorded once (GraphSnapshotRecorded, stream
 * `execution-graph-<process>-<graph id>`) and ExecutionStarted (schema version 3) names it by id.
 * The read model, a resumed run and a rebuild find the graph by that id; starts stored before
 * version 3, which carry their graph, still read, resume and rebuild.
 */
describe.each(modes)('graphs recorded once, named by starts (%s)', (mode) => {
  let harness: EngineHarness;
  beforeAll(async () => {
    harness = await startEngineHarness(mode, { leaseMs: 60_000 });
  });
  afterAll(() => harness.close());

  const graph = () =>
    new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Double', 'scriptNode', { code: 'return input.In.n * 2;' })
      .node('Out', 'outputNode')
      .edge('In', 'Double')
      .edge('Double', 'Out');

  const run = async (process: ProcessRecord, n: number): Promise<ExecutionRecord> =>
    (
      await harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, body: { n } },
        actorOf(process.organization_id),
      )
    ).body as ExecutionRecord;

  /** What Double answered (the output node answers its whole input). */
  const doubled = (record: ExecutionRecord | undefined): unknown =>
    (record?.output_data as { Out?: { Double?: unknown } } | null)?.Out?.Double;

  /** Every recording of `processId`'s graphs, as stored. */
  const recordingsOf = async (processId: string) =>
    (await harness.store.readAll({ eventTypes: [GRAPH_SNAPSHOT_RECORDED] })).filter(
      (event) => (event.data as GraphSnapshotRecordedData).processId === processId,
    );

  /** The ExecutionStarted row as stored: its schema version and its data, not upcast. */
  const storedStart = async (executionId: string) => {
    const { rows } = await sql<{ schema_version: number; data: Record<string, unknown> }>`
      SELECT schema_version, data FROM events WHERE stream_id = ${`execution-${executionId}`} AND type = 'ExecutionStarted'`.execute(
      harness.store.db,
    );
    return rows[0]!;
  };

  test('runs of a process record its graph once; each start names it; another process records its own', async () => {
    const org = crypto.randomUUID();
    const builder = graph();
    // Two processes with the very same graph (same node ids): one id, a recording each.
    const first = await harness.catalog.add(builder.process({ organization_id: org }));
    const second = await harness.catalog.add(builder.process({ organization_id: org }));
    const runs = [await run(first, 1), await run(first, 2), await run(second, 3)];
    expect(runs.map((record) => record.status)).toEqual(['completed', 'completed', 'completed']);
    expect(runs.map(doubled)).toEqual([2, 4, 6]);

    const id = graphSnapshotId(snapshotOf(first));
    for (const process of [first, second]) {
      const recordings = await recordingsOf(process.id);
      expect(recordings).toHaveLength(1);
      expect(recordings[0]).toMatchObject({
        streamId: `execution-graph-${process.id}-${id}`,
        streamVersion: 1,
        schemaVersion: 1,
        metadata: { organizationId: org, processId: process.id },
        data: { graphSnapshotId: id, processId: process.id, organizationId: org, processRevision: process.revision },
      });
      expect(graphSnapshotId((recordings[0]!.data as GraphSnapshotRecordedData).graphSnapshot)).toBe(id);
    }
    for (const record of runs) {
      const start = await storedStart(record.id);
      expect(start.schema_version).toBe(3);
      expect(start.data.graphSnapshotId).toBe(id);
      expect(start.data).not.toHaveProperty('graphSnapshot');
      // The record still shows the graph and a row per node.
      expect(record.graph_snapshot.nodes.map((node) => node.id)).toEqual(first.nodes.map((node) => node.id));
      expect(record.node_states.map((state) => state.status)).toEqual(['completed', 'completed', 'completed']);
    }

    const before = await Promise.all(runs.map((record) => findExecution(harness.store.db, record.id)));
    await rebuildProjection(harness.store, executionsProjection);
    expect(await Promise.all(runs.map((record) => findExecution(harness.store.db, record.id)))).toEqual(before);
  });

  test('a resumed run reads its graph from its recording; a start stored before version 3 resumes from its own copy', async () => {
    const org = crypto.randomUUID();
    const process = await harness.catalog.add(graph().process({ organization_id: org }));
    // Named by id (as this engine writes it now): no run of this process ever started here.
    const named = await seedExecution(harness.store, process, () => []);
    // Carried whole, as schema version 2 stored it: no id, no recording.
    const carried = crypto.randomUUID();
    const started: ExecutionEvent = {
      type: 'ExecutionStarted',
      data: {
        executionId: carried,
        processId: process.id,
        organizationId: org,
        processRevision: process.revision,
        triggerNodeId: process.nodes[0]!.id,
        inputData: { n: 21 },
        graphSnapshot: snapshotOf(process),
        triggeredByUserId: null,
        source: 'test',
        timeoutSeconds: 300,
        maxRetries: 0,
        errorWebhookUrl: null,
        startedAt: new Date().toISOString(),
      } as unknown as Extract<ExecutionEvent, { type: 'ExecutionStarted' }>['data'],
    };
    await postgresExecutionCommit(harness.store, { owner: 'engine-that-died', leaseMs: -1000 })([
      {
        streamId: `execution-${carried}`,
        events: [
          {
            type: started.type,
            data: started.data,
            schemaVersion: 2,
            metadata: { organizationId: org, processId: process.id, correlationId: carried },
          },
        ],
        expectedVersion: 'no_stream',
      },
    ]);
    // The read model built its rows from the carried graph too.
    expect((await findExecution(harness.store.db, carried))?.node_states).toHaveLength(3);

    const resumed = await harness.engine.runtime.engine.maintain();
    expect(new Set(resumed)).toEqual(new Set([named, carried]));
    await waitUntil(async () => {
      const records = await Promise.all([named, carried].map((id) => findExecution(harness.store.db, id)));
      return records.every((record) => record?.status === 'completed');
    });
    expect(doubled((await findExecution(harness.store.db, carried)) ?? undefined)).toBe(42);
    // The version 2 start reads back (upcast) with its graph's id as well.
    const [carriedStart] = await harness.store.readStream(`execution-${carried}`);
    expect(carriedStart).toMatchObject({
      schemaVersion: 3,
      data: { graphSnapshotId: graphSnapshotId(snapshotOf(process)) },
    });

    const before = await Promise.all([named, carried].map((id) => findExecution(harness.store.db, id)));
    await rebuildProjection(harness.store, executionsProjection);
    expect(await Promise.all([named, carried].map((id) => findExecution(harness.store.db, id)))).toEqual(before);
  });

  test('an undeliverable request of a process whose graph is on record is recorded as failed, naming that graph', async () => {
    const org = crypto.randomUUID();
    const process = await harness.catalog.add(graph().process({ organization_id: org }));
    await run(process, 1);
    const undeliverable = new UndeliverableRequests({
      directory: new BusProcessDirectory(harness.bus),
      commit: postgresExecutionCommit(harness.store, { owner: 'engine-test', leaseMs: 60_000 }),
      deadLetters: new PostgresExecutionDeadLetters(harness.store.db),
      logger: createLogger('undeliverable-test'),
    });
    const executionId = crypto.randomUUID();
    const request = { executionId, processId: process.id, organizationId: org, inputData: { n: 2 } };
    const outcome = await undeliverable.record(
      { ...request, source: 'test', requestedAt: new Date().toISOString() },
      new Error('no engine took it'),
      3,
    );
    expect(outcome).toBe('failed');
    expect(await findExecution(harness.store.db, executionId)).toMatchObject({ status: 'failed' });
    expect((await storedStart(executionId)).data.graphSnapshotId).toBe(graphSnapshotId(snapshotOf(process)));
    expect(await recordingsOf(process.id)).toHaveLength(1);
  });

  if (mode === 'distributed') {
    test('an engine that does not know a graph is on record finds it recorded and commits its start without a copy', async () => {
      const org = crypto.randomUUID();
      const process = await harness.catalog.add(graph().process({ organization_id: org }));
      const other = await startEngineHarness(mode, {}, { schema: harness.database.schema, queue: harness.queue });
      try {
        // Each engine runs one, for sure (a request over the bus may reach either).
        const runOn = async (on: EngineHarness, n: number): Promise<ExecutionRecord> => {
          const executionId = crypto.randomUUID();
          const request = { executionId, processId: process.id, organizationId: org, inputData: { n } };
          await on.engine.runtime.engine.start({ ...request, source: 'test', requestedAt: new Date().toISOString() });
          let record: ExecutionRecord | undefined;
          await waitUntil(
            async () => (record = await findExecution(harness.store.db, executionId))?.status === 'completed',
          );
          return record!;
        };
        const mine = await runOn(harness, 5);
        const theirs = await runOn(other, 6);
        expect([mine, theirs].map(doubled)).toEqual([10, 12]);
        // The other engine's start carried the recording too; its stream existed, so it was left out.
        const recordings = await recordingsOf(process.id);
        expect(recordings.map((event) => event.streamVersion)).toEqual([1]);
        expect(await storedStart(theirs.id)).toMatchObject({
          data: { graphSnapshotId: (recordings[0]!.data as GraphSnapshotRecordedData).graphSnapshotId },
        });
        // It knows now: its next start carries none (one commit, no retry).
        await runOn(other, 7);
        expect(await recordingsOf(process.id)).toHaveLength(1);
        const before = await Promise.all([mine, theirs].map((record) => findExecution(harness.store.db, record.id)));
        await rebuildProjection(harness.store, executionsProjection);
        expect(await Promise.all([mine, theirs].map((record) => findExecution(harness.store.db, record.id)))).toEqual(
          before,
        );
      } finally {
        await other.close();
      }
    });
  }
});
