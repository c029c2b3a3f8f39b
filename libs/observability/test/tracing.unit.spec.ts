import {
  createInMemorySpanExporter,
  currentTraceId,
  extractTraceContext,
  initTelemetry,
  injectTraceHeaders,
  withSpan,
  type Telemetry,
} from '../src/index.js';

describe('tracing with an in-memory exporter', () => {
  const exporter = createInMemorySpanExporter();
  let telemetry: Telemetry;
  beforeAll(() => {
    telemetry = initTelemetry('tracing-test', { spanExporter: exporter });
  });
  afterAll(() => telemetry.shutdown());
  beforeEach(() => exporter.reset());

  it('records a span with attributes and marks a throw as an error', async () => {
    await withSpan('ok', { 'weft.step': 1 }, () => 'done');
    await expect(
      withSpan('fails', {}, () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['ok', 'fails']);
    expect(spans[0]?.attributes).toEqual({ 'weft.step': 1 });
    expect(spans[1]?.status.code).toBe(2);
    expect(spans[0]?.resource.attributes['service.name']).toBe('tracing-test');
  });

  it('propagates a W3C traceparent from one side to the other', async () => {
    const headers = await withSpan('sender', {}, () => injectTraceHeaders({ other: 'x' }));
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(headers.other).toBe('x');
    const receivedTraceId = await withSpan('receiver', {}, () => currentTraceId(), {
      parent: extractTraceContext(headers),
      kind: 'consumer',
    });
    const [sender, receiver] = exporter.getFinishedSpans();
    expect(receivedTraceId).toBe(sender?.spanContext().traceId);
    expect(receiver?.parentSpanContext?.spanId).toBe(sender?.spanContext().spanId);
    expect(headers.traceparent).toContain(sender?.spanContext().spanId);
  });

  it('has no trace id outside a span', () => {
    expect(currentTraceId()).toBeUndefined();
  });
});
