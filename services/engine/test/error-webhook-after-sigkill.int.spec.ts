import type { ChildProcess } from 'node:child_process';
import type { ExecutionRecord } from '@weft/contracts';
import { NatsBus } from '@weft/bus';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { sharedEngineQueue } from './support/shared-engine-queue.js';
import { killHard, spawnEngineChild } from './support/spawn-engine-child.js';
import { startDistributedTestCatalog, type TestCatalog } from './support/test-catalog.js';
import { testNatsUrl } from './support/test-services.js';
import { waitUntil } from './support/wait-until.js';

/**
 * An engine SIGKILLed while it POSTs a failure to the error webhook: the delivery was recorded
 * with the failure, so another engine finds it once the dead engine's claim lapses and delivers it.
 */
describe('error webhook delivery survives SIGKILL (PostgreSQL + NATS)', () => {
  const { schema, queue, dispose } = sharedEngineQueue('hookkill');
  let hook: LocalHttpServer;
  let child: ChildProcess | undefined;
  let survivor: EngineHarness | undefined;
  let catalog: TestCatalog | undefined;

  beforeAll(async () => {
    // The first POST is never answered (its engine dies meanwhile); later ones are accepted.
    hook = await startLocalHttpServer((_request, res, index) => {
      if (index > 0) res.writeHead(204).end();
    });
  });
  afterAll(async () => {
    if (child) await killHard(child);
    await survivor?.close();
    await catalog?.stop();
    await hook.close();
    await dispose();
  });

  test('another engine delivers the failure report the killed engine was sending', async () => {
    const organizationId = crypto.randomUUID();
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Boom', 'scriptNode', { code: 'throw new Error("no luck")' })
      .edge('In', 'Boom');
    catalog = await startDistributedTestCatalog(schema, queue.durable);
    const process_ = await catalog.add(
      g.process({ organization_id: organizationId, error_webhook_url: `${hook.url}/errors` }),
    );
    child = await spawnEngineChild({
      schema,
      queue,
      leaseMs: 1000,
      env: { CHILD_ERROR_WEBHOOK_CLAIM_MS: '1500' },
    });

    const executionId = crypto.randomUUID();
    const nats = await NatsBus.connect({ servers: testNatsUrl() });
    await nats.enqueue(
      queue.spec,
      {
        executionId,
        processId: process_.id,
        organizationId,
        inputData: {},
        source: 'test',
        requestedAt: new Date().toISOString(),
      },
      { msgId: executionId },
    );
    await nats.close();

    await waitUntil(() => hook.requests.length === 1, 20_000);
    await killHard(child);
    child = undefined;

    survivor = await startEngineHarness(
      'distributed',
      { leaseMs: 1000, errorWebhook: { claimMs: 1500 } },
      { schema, queue },
    );
    const record = async (): Promise<ExecutionRecord | undefined> =>
      (await import('../src/projections/execution-queries.js')).findExecution(survivor!.database.db, executionId);
    await waitUntil(async () => (await record())?.error_webhook_deliveries.length === 1, 20_000);

    const finished = (await record())!;
    expect(finished.status).toBe('failed');
    expect(finished.error_webhook_deliveries).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'delivered', http_status: 204, error: null }),
    ]);
    expect(hook.requests).toHaveLength(2);
    expect(JSON.parse(hook.requests[1]!.body)).toMatchObject({
      executionId,
      status: 'failed',
      error: expect.stringContaining('no luck'),
    });
  });
});
