import type { ExecutionEvent, ExecutionRecord, ProcessRecord } from '@weft/contracts';
import { engineHttp } from '@weft/contracts';
import { sql } from 'kysely';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { seedExecution } from './support/seed-execution.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Leases follow what actually runs: an engine renews only the executions it is running (a lease
 * left behind by a resume that failed lapses, so the execution is resumed), stops a run whose
 * lease another engine took, and a resumed retry waits for its `retryAt`.
 */
describe('execution leases (PostgreSQL + NATS)', () => {
  let harness: EngineHarness;
  let server: LocalHttpServer;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  const waiting = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Pause', 'waitNode', { seconds: 20 })
    .node('Out', 'outputNode')
    .edge('In', 'Pause')
    .edge('Pause', 'Out');
  const flaky = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Flaky', 'integrationNode', { url: 'http://placeholder', retries: 0 })
    .node('Out', 'outputNode')
    .edge('In', 'Flaky')
    .edge('Flaky', 'Out');
  let waitingProcess: ProcessRecord;
  let flakyProcess: ProcessRecord;

  beforeAll(async () => {
    server = await startLocalHttpServer((_request, res) => json(res, 200, { ok: true }));
    harness = await startEngineHarness('distributed', { leaseMs: 1000 });
    waitingProcess = await harness.catalog.add(waiting.process({ organization_id: org }));
    const p = flaky.process({ organization_id: org, max_retries: 1 });
    p.nodes.find((n) => n.id === flaky.id('Flaky'))!.config.url = `${server.url}/flaky`;
    flakyProcess = await harness.catalog.add(p);
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const record = (id: string): Promise<ExecutionRecord | undefined> => findExecution(harness.database.db, id);
  const events = async (id: string) => harness.store.readStream(`execution-${id}`);
  const leaseOf = async (id: string) =>
    (
      await sql<{ owner: string }>`SELECT owner FROM engine_execution_leases WHERE execution_id = ${id}`.execute(
        harness.database.db,
      )
    ).rows[0];
  const startWaiting = async (): Promise<string> => {
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: waitingProcess.id }, query: { waitSeconds: '0' }, body: {} },
      actor,
    );
    return (reply.body as { execution_id: string }).execution_id;
  };

  test('a lease this engine holds for an execution it does not run lapses, and the execution is resumed', async () => {
    const running = await startWaiting();
    await waitUntil(async () => (await leaseOf(running)) !== undefined);
    const owner = (await leaseOf(running))!.owner;
    // As if this engine had claimed it for a resume that then failed: its lease, nothing running.
    const stranded = await seedExecution(harness.store, waitingProcess, () => [], { owner, leaseMs: 1000 });
    expect(harness.engine.runtime.engine.isRunningHere(stranded)).toBe(false);
    await waitUntil(async () => (await events(stranded)).some((e) => e.type === 'ExecutionResumed'), 20_000);
    // The resume's commit is visible a moment before the engine goes on with the run (its writer
    // hands callers their commits in the next turn): a read of the table can land in between.
    await waitUntil(() => harness.engine.runtime.engine.isRunningHere(stranded), 5_000);
  });

  test('a run whose lease another engine took stops here without writing on', async () => {
    const id = await startWaiting();
    await waitUntil(
      async () => (await record(id))?.node_states.find((s) => s.node_name === 'Pause')?.status === 'running',
    );
    await sql`UPDATE engine_execution_leases SET owner = 'another-engine', expires_at = now() + interval '1 hour'
      WHERE execution_id = ${id}`.execute(harness.database.db);
    await waitUntil(() => !harness.engine.runtime.engine.isRunningHere(id), 30_000);
    const types = (await events(id)).map((e) => e.type);
    expect(types).not.toContain('ExecutionCompleted');
    expect(types.filter((t) => t === 'NodeCompleted')).toHaveLength(1);
    expect((await record(id))?.status).toBe('running');
    expect((await leaseOf(id))?.owner).toBe('another-engine');
  });

  test('a resumed execution waits for its scheduled retry time before running the failed node again', async () => {
    const retryAt = new Date(Date.now() + 4000).toISOString();
    const node = (label: string, type: string, from: string[], at: string, executionId: string) =>
      ({
        type: 'NodeStarted',
        data: {
          executionId,
          nodeId: flaky.id(label),
          nodeName: label,
          nodeType: type,
          inputFrom: from.map((parent) => ({ nodeId: flaky.id(parent) })),
          inputData: {},
          attempt: 1,
          startedAt: at,
        },
      }) as unknown as ExecutionEvent;
    const id = await seedExecution(harness.store, flakyProcess, (executionId, at): ExecutionEvent[] => [
      node('In', 'inputNode', [], at, executionId),
      {
        type: 'NodeCompleted',
        data: {
          executionId,
          nodeId: flaky.id('In'),
          outputData: {},
          handles: ['output'],
          completedAt: at,
          durationMs: 0,
        },
      },
      node('Flaky', 'integrationNode', ['In'], at, executionId),
      {
        type: 'NodeFailed',
        data: { executionId, nodeId: flaky.id('Flaky'), error: 'answered 503', completedAt: at, durationMs: 1 },
      },
      {
        type: 'ExecutionRetryScheduled',
        data: { executionId, attempt: 2, failedNodeId: flaky.id('Flaky'), error: 'answered 503', retryAt },
      },
    ]);
    await waitUntil(async () => (await record(id))?.status === 'completed', 20_000);
    const starts = (await events(id)).filter(
      (e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === flaky.id('Flaky'),
    );
    // The seeded start, then the retry: with 1 s leases, a loaded machine can let the lease lapse
    // mid-call and the node run once more (at least once); no run may start before `retryAt`.
    expect(starts.length).toBeGreaterThanOrEqual(2);
    for (const start of starts.slice(1))
      expect(Date.parse((start.data as { startedAt: string }).startedAt)).toBeGreaterThanOrEqual(Date.parse(retryAt));
    expect((await events(id)).map((e) => e.type)).toContain('ExecutionResumed');
  });
});
