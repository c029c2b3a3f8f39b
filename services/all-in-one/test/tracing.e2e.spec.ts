import { randomBytes } from 'node:crypto';
import { createInMemorySpanExporter, initTelemetry, type InMemorySpanExporter } from '@weft/observability';
import type { RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client, removeDir, startEmbedded, tempDataDir } from './weft-harness.js';

describe('tracing: from the HTTP request to the stored event', () => {
  let exporter: InMemorySpanExporter;
  let telemetry: { shutdown(): Promise<void> };
  let weft: RunningWeft;
  let dataDir: string;

  beforeAll(async () => {
    exporter = createInMemorySpanExporter();
    telemetry = initTelemetry('weft-test', { spanExporter: exporter });
    dataDir = await tempDataDir();
    weft = await startEmbedded(dataDir, { WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
  });
  afterAll(async () => {
    await weft?.stop();
    await telemetry?.shutdown();
    await removeDir(dataDir);
  });

  test("the caller's traceparent is continued by the request span and written into the event's metadata", async () => {
    const traceId = randomBytes(16).toString('hex');
    const parentSpanId = randomBytes(8).toString('hex');
    const created = await client(weft.url, BOOTSTRAP_KEY)(
      'POST',
      '/api/v1/organizations',
      { name: 'Traced' },
      { traceparent: `00-${traceId}-${parentSpanId}-01` },
    );
    expect(created.status).toBe(201);

    const events = await weft.store.readStream(`organization-${created.body.id}`);
    expect(events).toHaveLength(1);
    expect(events[0]?.metadata.traceId).toBe(traceId);

    const serverSpan = exporter
      .getFinishedSpans()
      .find((span) => span.name === 'POST /api/v1/organizations' && span.spanContext().traceId === traceId);
    expect(serverSpan).toBeDefined();
    expect(serverSpan?.attributes['http.response.status_code']).toBe(201);
  });

  test("a webhook caller's traceparent continues into the execution's events", async () => {
    const system = client(weft.url, BOOTSTRAP_KEY);
    const org = (await system('POST', '/api/v1/organizations', { name: 'Hooked' })).body.id as string;
    const created = await system('POST', `/api/v1/processes/by-org/${org}`, {
      name: 'Traced hook',
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      edges: [{ source_node_id: 'in', target_node_id: 'out' }],
    });
    expect(created.status).toBe(201);
    expect((await system('POST', `/api/v1/processes/start/${created.body.id}`)).status).toBe(200);
    const traceId = randomBytes(16).toString('hex');
    const answer = await system(
      'POST',
      `/api/v1/processes/${created.body.id}/webhook`,
      { n: 1 },
      { traceparent: `00-${traceId}-0123456789abcdef-01` },
    );
    expect(answer.status).toBe(202);
    let events = await weft.store.readStream(`execution-${answer.body.execution_id}`);
    for (let tries = 0; tries < 100 && events.length === 0; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = await weft.store.readStream(`execution-${answer.body.execution_id}`);
    }
    expect(events.length).toBeGreaterThan(0);
    expect(events[0]!.metadata.traceId).toBe(traceId);
  });
});
