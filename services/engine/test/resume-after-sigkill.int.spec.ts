import type { ChildProcess } from 'node:child_process';
import type { ExecutionRecord } from '@weft/contracts';
import { NatsBus } from '@weft/bus';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { sharedEngineQueue } from './support/shared-engine-queue.js';
import { killHard, spawnEngineChild } from './support/spawn-engine-child.js';
import { startDistributedTestCatalog, type TestCatalog } from './support/test-catalog.js';
import { testDatabaseUrl, testNatsUrl } from './support/test-services.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Invariant 1: an engine killed with SIGKILL in the middle of an execution; another engine picks
 * the execution up from its events (lease lapsed) and finishes it without re-running completed
 * nodes; the wait node is a durable timer counted from its first start.
 */
describe('resume after SIGKILL (PostgreSQL + NATS)', () => {
  const { schema, queue, dispose } = sharedEngineQueue('kill');
  let server: LocalHttpServer;
  let child: ChildProcess | undefined;
  let survivor: EngineHarness | undefined;
  let catalog: TestCatalog | undefined;
  let hits = 0;

  beforeAll(async () => {
    server = await startLocalHttpServer((_request, res) => json(res, 200, { hit: ++hits }));
  });
  afterAll(async () => {
    if (child) await killHard(child);
    await survivor?.close();
    await catalog?.stop();
    await server.close();
    await dispose();
  });

  test('another engine finishes the execution; completed nodes never run again', async () => {
    const organizationId = crypto.randomUUID();
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('First', 'integrationNode', { url: `${server.url}/first` })
      .node('Pause', 'waitNode', { seconds: 3 })
      .node('Out', 'outputNode', {
        fields: { hit: '{{input["First"]["body"]["hit"]}}', waited: '{{input["Pause"]["waitedUntil"]}}' },
      })
      .edge('In', 'First')
      .edge('First', 'Pause')
      .edge('Pause', 'Out');
    catalog = await startDistributedTestCatalog(schema, queue.durable);
    const process_ = await catalog.add(g.process({ organization_id: organizationId }));
    child = await spawnEngineChild({ schema, queue, leaseMs: 1000 });

    // A second engine in this process shares the database and queue; it starts after the kill.
    const executionId = crypto.randomUUID();
    const nats = await NatsBus.connect({ servers: testNatsUrl() });
    await nats.enqueue(
      queue.spec,
      {
        executionId,
        processId: process_.id,
        organizationId,
        inputData: { go: true },
        source: 'test',
        requestedAt: new Date().toISOString(),
      },
      { msgId: executionId },
    );
    await nats.close();

    const { openDatabase } = await import('@weft/event-store');
    const reader = await openDatabase({ url: testDatabaseUrl(), schema });
    const record = (): Promise<ExecutionRecord | undefined> =>
      findExecution(reader.db, executionId).catch(() => undefined);
    const stateOf = async (label: string) => (await record())?.node_states.find((s) => s.node_name === label)?.status;
    await waitUntil(async () => (await stateOf('Pause')) === 'running', 20_000);
    expect(await stateOf('First')).toBe('completed');
    expect(await stateOf('Pause')).toBe('running');

    await killHard(child);
    child = undefined;

    survivor = await startEngineHarness('distributed', { leaseMs: 1000 }, { schema, queue });
    await waitUntil(async () => (await record())?.status === 'completed', 20_000);
    const finished = (await record())!;
    await reader.close();

    expect(finished.status).toBe('completed');
    expect(hits).toBe(1);
    const events = await survivor.store.readStream(`execution-${executionId}`);
    const started = (nodeId: string) =>
      events.filter((e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === nodeId);
    expect(started(g.id('First'))).toHaveLength(1);
    expect(started(g.id('Pause'))).toHaveLength(2);
    const firstPauseStart = Date.parse((started(g.id('Pause'))[0]!.data as { startedAt: string }).startedAt);
    expect(finished.output_data).toEqual({ Out: { hit: 1, waited: new Date(firstPauseStart + 3000).toISOString() } });
    expect(finished.node_states.map((s) => s.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });
});
