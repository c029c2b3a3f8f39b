import { randomUUID } from 'node:crypto';
import { request, type ServiceName } from '@weft/contracts';
import { createLogger } from '@weft/observability';

/**
 * Round-trip latency of small requests and throughput of a 5 MB reply over NatsBus, printed (not
 * asserted: the numbers depend on the machine). Run against your own nats-server:
 *   MEASURE_NATS_URL=nats://127.0.0.1:4244 node node_modules/jest/bin/jest.js --testRegex 'request-reply\.measure\.ts$'
 * MEASURE_BUS_SRC points at another copy of libs/bus/src to compare (default: this one).
 */
const servers = process.env.MEASURE_NATS_URL ?? '';
const SMALL_REQUESTS = Number(process.env.MEASURE_REQUESTS ?? 10_000);
const LARGE_REPLIES = Number(process.env.MEASURE_LARGE_REPLIES ?? 20);
const service: ServiceName = 'testing';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

test('request/reply latency and large-reply throughput', async () => {
  if (!servers) throw new Error('set MEASURE_NATS_URL');
  const { NatsBus } = (await import(
    process.env.MEASURE_BUS_SRC ?? '../src/index.js'
  )) as typeof import('../src/index.js');
  const logger = createLogger('bus', { level: 'silent' });
  const [server, client] = [await NatsBus.connect({ servers, logger }), await NatsBus.connect({ servers, logger })];
  try {
    const subject = `weft.measure.${randomUUID().slice(0, 8)}`;
    const echo = request<{ n: number }, { n: number }>(`${subject}.echo`, [service], service);
    await server.serve(echo, async (call) => call);
    for (let n = 0; n < 500; n += 1) await client.request(echo, { n });
    const times: number[] = [];
    const started = process.hrtime.bigint();
    for (let n = 0; n < SMALL_REQUESTS; n += 1) {
      const sent = process.hrtime.bigint();
      await client.request(echo, { n });
      times.push(Number(process.hrtime.bigint() - sent) / 1e6);
    }
    const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
    times.sort((a, b) => a - b);
    console.log(
      `${SMALL_REQUESTS} small requests: ${totalMs.toFixed(0)} ms, ${((SMALL_REQUESTS / totalMs) * 1000).toFixed(0)} req/s, ` +
        `mean ${(totalMs / SMALL_REQUESTS).toFixed(3)} ms, p50 ${percentile(times, 0.5).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms`,
    );

    const fiveMb = 'x'.repeat(5 * 1024 * 1024);
    const large = request<object, { text: string }>(`${subject}.large`, [service], service);
    await server.serve(large, async () => ({ text: fiveMb }));
    const outcome = await client.request(large, {}, { timeoutMs: 60_000 }).then(
      (reply) => (reply.text.length === fiveMb.length ? 'ok' : 'wrong length'),
      (error: unknown) => `failed: ${(error as Error).message}`,
    );
    if (outcome !== 'ok') {
      console.log(`5 MB reply: ${outcome}`);
      return;
    }
    const largeStarted = process.hrtime.bigint();
    for (let n = 0; n < LARGE_REPLIES; n += 1) await client.request(large, {}, { timeoutMs: 60_000 });
    const largeMs = Number(process.hrtime.bigint() - largeStarted) / 1e6;
    console.log(
      `${LARGE_REPLIES} replies of 5 MB: ${(largeMs / LARGE_REPLIES).toFixed(1)} ms each, ` +
        `${((LARGE_REPLIES * 5 * 1000) / largeMs).toFixed(0)} MB/s (max_payload ${client.connection.info?.max_payload})`,
    );
  } finally {
    await client.close();
    await server.close();
  }
}, 600_000);
