import { randomBytes, randomUUID } from 'node:crypto';
import { initTelemetry, injectTraceHeaders, withSpan } from '@weft/observability';
import type { RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client, removeDir, startEmbedded, tempDataDir } from './weft-harness.js';

/** Tracing off (no OTEL_* variables): trace ids still correlate a request across services. */
describe('trace ids with tracing off', () => {
  let telemetry: { enabled: boolean; shutdown(): Promise<void> };
  let weft: RunningWeft;
  let dataDir: string;
  let orgId: string;

  beforeAll(async () => {
    telemetry = initTelemetry('weft-test');
    dataDir = await tempDataDir();
    weft = await startEmbedded(dataDir, { WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY });
    orgId = (await client(weft.url, BOOTSTRAP_KEY)('POST', '/api/v1/organizations', { name: 'Fallback' })).body.id;
  });
  afterAll(async () => {
    await weft?.stop();
    await telemetry?.shutdown();
    await removeDir(dataDir);
  });

  const createProcess = (headers: Record<string, string> = {}) =>
    client(weft.url, BOOTSTRAP_KEY)(
      'POST',
      `/api/v1/processes/by-org/${orgId}`,
      { name: `p-${randomUUID()}` },
      headers,
    );

  test('the SDK is off', async () => {
    expect(telemetry.enabled).toBe(false);
    // No SDK, no sampler: a span is only a carrier of ids, and what leaves the process is flagged "not sampled".
    const headers = await withSpan('probe', {}, async () => injectTraceHeaders({}));
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  });

  test("a caller's traceparent crosses the bus into the catalog's event", async () => {
    const traceId = randomBytes(16).toString('hex');
    const created = await createProcess({ traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` });
    expect(created.status).toBe(201);
    const events = await weft.store.readStream(`process-${created.body.id}`);
    expect(events[0]?.metadata.traceId).toBe(traceId);
  });

  test('without a traceparent each request gets a fresh trace id of its own', async () => {
    const first = await createProcess();
    const second = await createProcess();
    const [a] = await weft.store.readStream(`process-${first.body.id}`);
    const [b] = await weft.store.readStream(`process-${second.body.id}`);
    expect(a?.metadata.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(b?.metadata.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a?.metadata.traceId).not.toBe(b?.metadata.traceId);
  });
});
