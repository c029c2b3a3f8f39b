import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { createInMemorySpanExporter, initTelemetry, withSpan, type Telemetry } from '@weft/observability';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/** An operator follows one request through the execution and every node in one trace. */
describe('execution tracing (embedded, in-memory span exporter)', () => {
  const exporter = createInMemorySpanExporter();
  let telemetry: Telemetry;
  let harness: EngineHarness;
  beforeAll(async () => {
    telemetry = initTelemetry('weft-engine-test', { spanExporter: exporter });
    harness = await startEngineHarness('embedded');
  });
  afterAll(async () => {
    await harness.close();
    await telemetry.shutdown();
  });

  test('the execution span and one span per node run share the caller trace; events carry its id', async () => {
    const org = crypto.randomUUID();
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'webhook' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Double', 'scriptNode', { code: 'return input.Each.item * 2;' })
      .node('Out', 'outputNode')
      .edge('In', 'Each')
      .edge('Each', 'Double', 'start')
      .edge('Each', 'Out', 'output');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    let traceId = '';
    const record = await withSpan('POST /api/v1/processes/test', {}, async (span) => {
      traceId = span.spanContext().traceId;
      const reply = await harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, body: { items: [1, 2] } },
        actorOf(org),
      );
      return reply.body as ExecutionRecord;
    });
    expect(record.status).toBe('completed');
    await waitUntil(() => exporter.getFinishedSpans().some((s) => s.name === `execution ${process.id}`));

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    expect(spans.map((s) => s.name)).toEqual(
      expect.arrayContaining([
        `execution ${process.id}`,
        'node inputNode In',
        'node loopNode Each',
        'node scriptNode Double',
        'node outputNode Out',
      ]),
    );
    expect(
      spans
        .filter((s) => s.name === 'node scriptNode Double')
        .map((s) => s.attributes['weft.loop.index'])
        .sort(),
    ).toEqual(['0', '1']);
    const events = await harness.store.readStream(`execution-${record.id}`);
    expect(events[0]?.metadata.traceId).toBe(traceId);
  });
});
