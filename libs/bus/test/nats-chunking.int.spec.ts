import { randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, headers, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import {
  engineHttp,
  engineQueues,
  ProblemError,
  request,
  workQueue,
  type ExecutionRequest,
  type HttpCall,
  type ServiceName,
} from '@weft/contracts';
import { createLogger } from '@weft/observability';
import {
  NATS_SERVICE_USERS,
  NATS_SUBSCRIBER_USER,
  NatsBus,
  natsInboxPrefix,
  natsPasswordVariable,
} from '../src/index.js';
import { SMALL_MAX_PAYLOAD, startNatsWithMaxPayload, type NatsServerProcess } from './support/small-payload-nats.js';

/** What only NatsBus has: a server max_payload below the bus's own limit, and chunk sets left half done. */

const MB = 1024 * 1024;
const service: ServiceName = 'testing';
const logger = createLogger('bus', { level: 'silent' });
const uniqueSubject = () => `weft.test.${randomUUID().replace(/-/g, '').slice(0, 12)}`;
const decoded = (data: Uint8Array) => JSON.parse(new TextDecoder().decode(data)) as { status: number };

const chunkHeaders = (fields: Record<string, string>): MsgHdrs => {
  const result = headers();
  for (const [name, value] of Object.entries(fields)) result.set(name, value);
  return result;
};

describe('NatsBus chunking', () => {
  let server: NatsServerProcess;
  let raw: NatsConnection;
  let jsm: JetStreamManager;
  const buses: NatsBus[] = [];
  const newBus = async (options: { maxMessageBytes?: number; chunkTimeoutMs?: number } = {}) => {
    const bus = await NatsBus.connect({ servers: server.url, logger, ...options });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    server = await startNatsWithMaxPayload();
    raw = await connect({ servers: server.url });
    jsm = await jetstreamManager(raw);
  });
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });
  afterAll(async () => {
    await raw.close();
    await server.stop();
  });

  it('a serving replica that allows less than the sender answers 413 before buffering the request', async () => {
    const [replica, caller] = [await newBus({ maxMessageBytes: MB }), await newBus({ maxMessageBytes: 8 * MB })];
    const spec = request<{ text: string }, { ok: boolean }>(uniqueSubject(), [service], service);
    let handled = false;
    await replica.serve(spec, async () => ((handled = true), { ok: true }));
    const error = await caller
      .request(spec, { text: 'x'.repeat(2 * MB) }, { timeoutMs: 600_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).status).toBe(413);
    expect(handled).toBe(false);
  });

  it('drops a chunked request whose next chunk comes too late, and says so to its sender', async () => {
    const replica = await newBus({ chunkTimeoutMs: 20 });
    const spec = request<{ text: string }, { ok: boolean }>(uniqueSubject(), [service], service);
    await replica.serve(spec, async () => ({ ok: true }));
    const first = await raw.request(spec.subject, new TextEncoder().encode('{"text":"'), {
      timeout: 5_000,
      headers: chunkHeaders({ 'weft-chunk': '1/2', 'weft-chunk-id': 'late', 'weft-chunk-bytes': '12' }),
    });
    const target = first.headers?.get('weft-chunk-subject');
    expect(target).toMatch(new RegExp(`^${spec.subject.replace(/\./g, '\\.')}\\.chunked\\.`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const second = await raw.request(target!, new TextEncoder().encode('ab"}'), {
      timeout: 5_000,
      headers: chunkHeaders({ 'weft-chunk': '2/2', 'weft-chunk-id': 'late' }),
    });
    expect(second.headers?.get('weft-problem')).toBe('1');
    expect(decoded(second.data).status).toBe(408);
  });

  it('refuses a chunk set that does not start with its first chunk or announces more chunks than its size allows', async () => {
    const replica = await newBus();
    const spec = request<object, object>(uniqueSubject(), [service], service);
    let handled = false;
    await replica.serve(spec, async () => ((handled = true), {}));
    const send = (part: string, bytes: string) =>
      raw.request(spec.subject, new TextEncoder().encode('{}'), {
        timeout: 5_000,
        headers: chunkHeaders({ 'weft-chunk': part, 'weft-chunk-id': randomUUID(), 'weft-chunk-bytes': bytes }),
      });
    for (const answer of [await send('2/2', '4'), await send('1/100000', '4')]) {
      expect(answer.headers?.get('weft-problem')).toBe('1');
      expect(decoded(answer.data).status).toBe(400);
    }
    expect(handled).toBe(false);
  });

  it('drops the chunks of a reply nobody fetches, and says so to a late fetch', async () => {
    const replica = await newBus({ chunkTimeoutMs: 20 });
    const spec = request<object, { text: string }>(uniqueSubject(), [service], service);
    await replica.serve(spec, async () => ({ text: 'y'.repeat(4 * SMALL_MAX_PAYLOAD) }));
    const first = await raw.request(spec.subject, new TextEncoder().encode('{}'), { timeout: 5_000 });
    const [, count] = (first.headers?.get('weft-chunk') ?? '').split('/');
    expect(Number(count)).toBeGreaterThan(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const late = await raw.request(first.headers!.get('weft-chunk-subject'), undefined, {
      timeout: 5_000,
      headers: chunkHeaders({
        'weft-chunk': `2/${count}`,
        'weft-chunk-id': first.headers!.get('weft-chunk-id'),
        'weft-chunk-fetch': '1',
      }),
    });
    expect(late.headers?.get('weft-problem')).toBe('1');
    expect(decoded(late.data).status).toBe(408);
  });

  it('removes the chunks of a large work message once it is handled, and those of a duplicate at once', async () => {
    const [consumer, producer] = [await newBus(), await newBus()];
    const subject = uniqueSubject();
    const stream = `WEFT_TEST_${subject.slice(10).toUpperCase()}`;
    const spec = workQueue<{ text: string }>(stream, subject, [service], service);
    const payload = { text: 'x'.repeat(4 * SMALL_MAX_PAYLOAD) };
    await producer.enqueue(spec, payload, { msgId: 'once' });
    await producer.enqueue(spec, payload, { msgId: 'once' });
    const chunkMessages = async () => (await jsm.streams.info(`${stream}_CHUNKS`)).state.messages;
    expect(await chunkMessages()).toBeGreaterThan(1);
    let handled!: () => void;
    const done = new Promise<void>((resolve) => (handled = resolve));
    const received: unknown[] = [];
    await consumer.consume(spec, { durable: 'large' }, async (message) => {
      received.push(message.payload);
      handled();
    });
    await done;
    await consumer.close();
    expect(received).toEqual([payload]);
    expect(await chunkMessages()).toBe(0);
    await jsm.streams.delete(stream);
    await jsm.streams.delete(`${stream}_CHUNKS`);
  });

  it('chunks travel under the generated NATS permissions (infra/nats/auth.conf), between the users of the subject', async () => {
    const users = [...NATS_SERVICE_USERS, NATS_SUBSCRIBER_USER] as const;
    // nats-server parses the variable as a config value: a letter first keeps it a string.
    const passwords = Object.fromEntries(users.map((user) => [user, `p${randomUUID().replace(/-/g, '')}`]));
    const authorized = await startNatsWithMaxPayload(
      SMALL_MAX_PAYLOAD,
      Object.fromEntries(users.map((user) => [natsPasswordVariable(user), passwords[user]!])),
    );
    const as = (user: 'gateway' | 'engine' | 'trigger') =>
      NatsBus.connect({
        servers: authorized.url,
        logger,
        security: { user, password: passwords[user] },
        inboxPrefix: natsInboxPrefix(user),
        connection: { maxReconnectAttempts: 0 },
      });
    const [engine, gateway, trigger] = [await as('engine'), await as('gateway'), await as('trigger')];
    try {
      await engine.serve(engineHttp.getExecution, async (call: HttpCall) => ({
        status: 200,
        body: { echoed: call.body, padding: 'z'.repeat(MB) },
      }));
      const body = { text: 'x'.repeat(MB) };
      const call = { method: 'GET', path: '/x', params: {}, query: {}, headers: {}, body } as unknown as HttpCall;
      const reply = await gateway.request(engineHttp.getExecution, call, { timeoutMs: 60_000 });
      expect(reply).toEqual({ status: 200, body: { echoed: body, padding: 'z'.repeat(MB) } });

      // A work message: the trigger stores its chunks, the engine reads and removes them.
      const work: ExecutionRequest = {
        executionId: randomUUID(),
        processId: 'p',
        organizationId: 'o',
        inputData: { text: 'w'.repeat(MB) },
        source: 'trigger',
        requestedAt: new Date().toISOString(),
      };
      let taken!: (request: ExecutionRequest) => void;
      const received = new Promise<ExecutionRequest>((resolve) => (taken = resolve));
      await engine.consume(engineQueues.executionRequests, { durable: 'engine-executions' }, async (message) =>
        taken(message.payload),
      );
      await trigger.enqueue(engineQueues.executionRequests, work, { msgId: work.executionId });
      expect(await received).toEqual(work);
    } finally {
      await trigger.close();
      await gateway.close();
      await engine.close();
      await authorized.stop();
    }
  });
});
