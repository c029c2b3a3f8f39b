import { currentTraceId, extractTraceContext, initTelemetry, injectTraceHeaders, withSpan } from '../src/index.js';

const OTEL_VARIABLES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_TRACES_EXPORTER'];

describe('initTelemetry from OTEL_* variables', () => {
  const saved = Object.fromEntries(OTEL_VARIABLES.map((name) => [name, process.env[name]]));
  beforeEach(() => OTEL_VARIABLES.forEach((name) => delete process.env[name]));
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) if (value !== undefined) process.env[name] = value;
  });

  it('starts nothing without them, and the tracing helpers still work as no-ops', async () => {
    const telemetry = initTelemetry('off-test');
    expect(telemetry.enabled).toBe(false);
    const inside = await withSpan('noop', { a: 1 }, () => ({
      traceId: currentTraceId(),
      headers: injectTraceHeaders({ keep: 'me' }),
    }));
    expect(inside).toEqual({ traceId: undefined, headers: { keep: 'me' } });
    await expect(withSpan('noop', {}, () => Promise.reject(new Error('still thrown')))).rejects.toThrow('still thrown');
    const parent = extractTraceContext({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    await expect(withSpan('child', {}, () => 42, { parent })).resolves.toBe(42);
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
