import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { waitUntil } from './support/wait-until.js';

/**
 * Error-webhook delivery is durable and visible: every attempt is an event on the execution,
 * shown as `error_webhook_deliveries`; failed attempts are retried with exponential backoff until
 * delivered or given up; the answer's body is read only up to a cap.
 */
describe.each<EngineMode>(['embedded', 'distributed'])('error webhook delivery (%s)', (mode) => {
  let harness: EngineHarness;
  let hook: LocalHttpServer;
  let answers: number[] = [];
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    hook = await startLocalHttpServer((request, res) => {
      if (request.url === '/endless') {
        // An answer that never ends: only a capped read returns.
        res.writeHead(500, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16 * 1024);
        const pump = (): void => {
          while (res.write(chunk));
          res.once('drain', pump);
        };
        pump();
        return;
      }
      return json(res, answers.shift() ?? 204, { ok: true });
    });
    harness = await startEngineHarness(mode, {
      errorWebhook: { backoffMs: 40, maxAttempts: 3, timeoutMs: 5000, maxResponseBytes: 1024 },
    });
  });
  afterAll(async () => {
    await harness.close();
    await hook.close();
  });

  const failingProcess = async (path: string) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Boom', 'scriptNode', { code: 'throw new Error("no luck")' })
      .edge('In', 'Boom');
    return await harness.catalog.add(g.process({ organization_id: org, error_webhook_url: `${hook.url}${path}` }));
  };
  const run = async (processId: string): Promise<string> =>
    (
      (await harness.call(engineHttp.testProcess, { params: { processId }, query: {}, body: {} }, actor))
        .body as ExecutionRecord
    ).id;
  const record = async (id: string): Promise<ExecutionRecord> =>
    (await harness.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;

  test('attempts are recorded on the execution; 5xx is retried with doubling backoff until delivered', async () => {
    answers = [503, 503, 204];
    const before = hook.requests.length;
    const id = await run((await failingProcess('/retry')).id);
    await waitUntil(async () => (await record(id)).error_webhook_deliveries.length === 3, 20_000);
    const deliveries = (await record(id)).error_webhook_deliveries;
    expect(deliveries.map((d) => [d.attempt, d.outcome, d.http_status])).toEqual([
      [1, 'retrying', 503],
      [2, 'retrying', 503],
      [3, 'delivered', 204],
    ]);
    const delays = deliveries.slice(0, 2).map((d) => Date.parse(d.next_attempt_at!) - Date.parse(d.attempted_at));
    expect(delays).toEqual([40, 80]);
    expect(deliveries[0]!.error).toContain('answered 503');
    const sent = hook.requests.slice(before);
    expect(sent.map((r) => r.headers['x-weft-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(JSON.parse(sent[2]!.body)).toMatchObject({ executionId: id, status: 'failed', attempt: 1 });
    // The delivery is done: nothing is attempted again.
    expect(await harness.engine.runtime.engine.deliverErrorWebhooks()).toBe(0);
  });

  test('a delivery failing every attempt is abandoned after the last one', async () => {
    answers = [500, 500, 500, 500];
    const id = await run((await failingProcess('/down')).id);
    await waitUntil(async () => (await record(id)).error_webhook_deliveries.at(-1)?.outcome === 'abandoned', 20_000);
    const deliveries = (await record(id)).error_webhook_deliveries;
    expect(deliveries.map((d) => d.outcome)).toEqual(['retrying', 'retrying', 'abandoned']);
    expect(deliveries[2]!.next_attempt_at).toBeNull();
    expect(answers).toEqual([500]);
  });

  test('a 4xx answer is not retried, and an endless answer body is read only up to the cap', async () => {
    answers = [410];
    const gone = await run((await failingProcess('/gone')).id);
    const endless = await run((await failingProcess('/endless')).id);
    await waitUntil(async () => (await record(gone)).error_webhook_deliveries.length === 1, 20_000);
    expect((await record(gone)).error_webhook_deliveries[0]).toMatchObject({ outcome: 'abandoned', http_status: 410 });
    await waitUntil(async () => (await record(endless)).error_webhook_deliveries.length > 0, 20_000);
    const first = (await record(endless)).error_webhook_deliveries[0]!;
    expect(first).toMatchObject({ outcome: 'retrying', http_status: 500 });
    expect(first.error).toMatch(/^answered 500: x{100,}$/);
  });
});
