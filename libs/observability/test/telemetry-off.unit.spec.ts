import { currentTraceId, extractTraceContext, initTelemetry, injectTraceHeaders, withSpan } from '../src/index.js';

const OTEL_VARIABLES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_TRACES_EXPORTER'];

describe('initTelemetry from OTEL_* variables', () => {
  const saved = Object.fromEntries(OTEL_VARIABLES.map((name) => [name, process.env[name]]));
  beforeEach(() => OTEL_VARIABLES.forEach((name) => delete process.env[name]));
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
  });

  it('starts no SDK without them; trace ids still exist and propagate, unsampled', async () => {
    const telemetry = initTelemetry('off-test');
    expect(telemetry.enabled).toBe(false);
    const inside = await withSpan('root', { a: 1 }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { traceId: currentTraceId(), headers: injectTraceHeaders({ keep: 'me' }) };
    });
    // A fresh trace id survives async hops and travels as a W3C traceparent flagged "not sampled".
    expect(inside.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(inside.headers).toEqual({
      keep: 'me',
      traceparent: expect.stringMatching(new RegExp(`^00-${inside.traceId}-[0-9a-f]{16}-00$`)),
    });
    await expect(withSpan('failing', {}, () => Promise.reject(new Error('still thrown')))).rejects.toThrow(
      'still thrown',
    );
    const parent = extractTraceContext({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    await expect(withSpan('child', {}, () => currentTraceId(), { parent })).resolves.toBe(
      '0af7651916cd43dd8448eb211c80319c',
    );
    await telemetry.shutdown();
  });

  it('untracedWithoutTrace: outside a trace starts none; inside one, carries it on', async () => {
    const telemetry = initTelemetry('off-untraced-test');
    const untraced = () => ({ traceId: currentTraceId(), headers: injectTraceHeaders() });
    await expect(withSpan('publish', {}, untraced, { untracedWithoutTrace: true })).resolves.toEqual({
      traceId: undefined,
      headers: {},
    });
    const inTrace = await withSpan('request', {}, async () => ({
      outer: currentTraceId(),
      inner: await withSpan('publish', {}, untraced, { untracedWithoutTrace: true }),
    }));
    expect(inTrace.inner.traceId).toBe(inTrace.outer);
    expect(inTrace.inner.headers.traceparent).toContain(inTrace.outer);
    await telemetry.shutdown();
  });

  it('starts the SDK when OTEL_TRACES_EXPORTER is set', async () => {
    process.env.OTEL_TRACES_EXPORTER = 'none';
    const telemetry = initTelemetry('exporter-chosen-test');
    expect(telemetry.enabled).toBe(true);
    await telemetry.shutdown();
  });

  it('starts the SDK with the OTLP http exporter when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    // Nothing listens there and no span is created, so nothing is sent.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:1';
    const telemetry = initTelemetry('endpoint-test');
    expect(telemetry.enabled).toBe(true);
    await telemetry.shutdown();
  });
});
