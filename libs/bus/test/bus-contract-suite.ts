import { randomUUID } from 'node:crypto';
import { notFound, ProblemError, request, workQueue, type ServiceName } from '@weft/contracts';
import { Writable } from 'node:stream';
import {
  createInMemorySpanExporter,
  createLogger,
  currentTraceId,
  initTelemetry,
  withSpan,
  type Logger,
  type Telemetry,
} from '@weft/observability';
import {
  JsonText,
  type Actor,
  type Bus,
  type MessageContext,
  type PublishedEvent,
  type WorkMessage,
} from '../src/index.js';

/** How the contract suite gets buses of one implementation. */
export interface BusHarness {
  /** A new bus, as a new replica would have, logging to `logger`; the suite closes it. */
  create(logger: Logger, options?: { maxMessageBytes?: number }): Promise<Bus>;
  /** Makes the next reply `bus` publishes fail as a broken connection would. NATS only. */
  failNextReply?: (bus: Bus) => void;
  /** Kills a bus the way a crashed process would: nothing acked, nothing drained. NATS only. */
  crash?: (bus: Bus) => Promise<void>;
  /** Set when buses from `create` share work queues, as replicas on one server do. NATS only. */
  sharedQueues?: boolean;
  /** Removes a stream the suite created (unique names only). */
  deleteStream?: (stream: string) => Promise<void>;
  /** Called once after every test of the suite. */
  dispose?: () => Promise<void>;
}

const uniqueId = () => randomUUID().replace(/-/g, '').slice(0, 12);
const service: ServiceName = 'testing';

/** A promise with its resolve function, to wait for a handler to have run. */
const signal = <T = void>() => {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
};

/** Resolves when `count` items were collected. */
const collector = <T>(count: number) => {
  const items: T[] = [];
  const done = signal<T[]>();
  return {
    items,
    done: done.promise,
    add(item: T) {
      items.push(item);
      if (items.length === count) done.resolve(items);
    },
  };
};

/** Waits (without a deadline: the test's own timeout catches a hang) until `condition` holds. */
const until = async (condition: () => boolean): Promise<void> => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
};

const actor: Actor = { organizationId: 'org-1', userId: 'user-1', userName: 'Zoë Ünal', system: false };

export function describeBusContract(name: string, harness: BusHarness): void {
  describe(`Bus contract: ${name}`, () => {
    const exporter = createInMemorySpanExporter();
    let telemetry: Telemetry;
    const buses: Bus[] = [];
    const streams: string[] = [];
    // Bus logs are captured: tests read them, and the test output stays clean.
    const logLines: Array<Record<string, unknown>> = [];
    const logger = createLogger('bus', {
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
          done();
        },
      }),
    });
    const newBus = async (options?: { maxMessageBytes?: number }) => {
      const bus = await harness.create(logger, options);
      buses.push(bus);
      return bus;
    };
    const names = () => {
      const id = uniqueId();
      return { subject: `weft.test.${id}`, stream: `WEFT_TEST_${id}`.toUpperCase() };
    };
    const newStream = (stream: string) => {
      streams.push(stream);
      return stream;
    };

    beforeAll(() => {
      telemetry = initTelemetry(`bus-contract-${name}`, { spanExporter: exporter });
    });
    afterEach(async () => {
      await Promise.all(buses.splice(0).map((bus) => bus.close()));
    });
    afterAll(async () => {
      for (const stream of streams) await harness.deleteStream?.(stream);
      await harness.dispose?.();
      await telemetry.shutdown();
    });

    describe('request/reply', () => {
      it('answers a request and gives the handler actor and correlation id', async () => {
        const bus = await newBus();
        const echo = request<{ text: string }, { text: string; context: MessageContext }>(
          names().subject,
          [service],
          service,
        );
        await bus.serve(echo, async (call, context) => ({ text: call.text.toUpperCase(), context }));
        const reply = await bus.request(echo, { text: 'hi' }, { actor, correlationId: 'corr-1', headers: { x: 'y' } });
        expect(reply.text).toBe('HI');
        expect(reply.context.actor).toEqual(actor);
        expect(reply.context.correlationId).toBe('corr-1');
        expect(reply.context.headers).toMatchObject({ x: 'y', 'weft-correlation-id': 'corr-1' });
      });

      it('passes copies of payloads and results, never shared objects', async () => {
        const bus = await newBus();
        const spec = request<{ list: number[] }, { list: number[] }>(names().subject, [service], service);
        const kept = { list: [1] };
        await bus.serve(spec, async (call) => {
          call.list.push(2);
          return kept;
        });
        const sent = { list: [0] };
        const reply = await bus.request(spec, sent);
        expect(sent.list).toEqual([0]);
        expect(reply).toEqual(kept);
        expect(reply).not.toBe(kept);
      });

      it('answers an HTTP reply asked with replyBodyAsJsonText with the same JSON, an object or array body as its text', async () => {
        const bus = await newBus();
        type Reply = { status: number; headers?: Record<string, string>; body?: unknown };
        const spec = request<{ kind: string }, Reply>(names().subject, [service], service);
        const kept = { id: 'é1', nested: { list: [1, null, 'x'] } };
        const bodies: Record<string, unknown> = {
          object: kept,
          array: [kept],
          text: 'plain',
          none: undefined,
          // Objects whose JSON is not an object or array: decoded on every transport.
          date: new Date(0),
          number: { toJSON: () => 5 },
        };
        await bus.serve(spec, async (call) => ({
          status: 201,
          headers: { 'x-kind': call.kind },
          body: bodies[call.kind],
        }));
        for (const kind of Object.keys(bodies)) {
          const reply = await bus.request(spec, { kind }, { replyBodyAsJsonText: true });
          expect(reply.status).toBe(201);
          expect(reply.headers).toEqual({ 'x-kind': kind });
          expect(JSON.stringify(reply.body)).toBe(JSON.stringify(bodies[kind]));
          if (kind === 'object' || kind === 'array') {
            expect(reply.body).toBeInstanceOf(JsonText);
            expect((reply.body as JsonText).text).toBe(JSON.stringify(bodies[kind]));
          } else {
            const sent = bodies[kind];
            expect(reply.body).toEqual(sent === undefined ? undefined : JSON.parse(JSON.stringify(sent)));
          }
        }
        // Asked without it, the body is decoded, a copy.
        const decoded = await bus.request(spec, { kind: 'object' });
        expect(decoded.body).toEqual(kept);
        expect(decoded.body).not.toBe(kept);
      });

      it('rethrows a handler ProblemError with the same problem', async () => {
        const bus = await newBus();
        const spec = request<{ id: string }, never>(names().subject, [service], service);
        const thrown = new ProblemError(400, 'bad input', { errors: [{ path: '/id', message: 'too short' }] });
        await bus.serve(spec, async (call) => {
          if (call.id === 'missing') throw notFound('process missing not found');
          throw thrown;
        });
        const notFoundError = await bus.request(spec, { id: 'missing' }).catch((error: unknown) => error);
        expect(notFoundError).toBeInstanceOf(ProblemError);
        expect((notFoundError as ProblemError).problem).toEqual(notFound('process missing not found').problem);
        const badRequest = await bus.request(spec, { id: 'x' }).catch((error: unknown) => error);
        expect((badRequest as ProblemError).problem).toEqual(thrown.problem);
      });

      it('turns any other error into a 500 problem that does not leak internals', async () => {
        const bus = await newBus();
        const spec = request<object, never>(names().subject, [service], service);
        await bus.serve(spec, async () => {
          throw new Error('password=hunter2 at db.internal:5432');
        });
        const error = await bus.request(spec, {}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProblemError);
        expect((error as ProblemError).status).toBe(500);
        expect(JSON.stringify((error as ProblemError).problem)).not.toContain('hunter2');
        // The detail is for operators: it is logged where the handler ran.
        const logged = logLines.find((line) => line.msg === 'request handler failed' && line.subject === spec.subject);
        expect(logged?.err).toMatchObject({ message: 'password=hunter2 at db.internal:5432' });
      });

      it('answers 503 when nobody serves the subject', async () => {
        const bus = await newBus();
        const spec = request<object, object>(names().subject, [service], service);
        const error = await bus.request(spec, {}).catch((caught: unknown) => caught);
        expect((error as ProblemError).status).toBe(503);
      });

      it('answers 504 when the handler does not reply in time', async () => {
        const bus = await newBus();
        const spec = request<object, object>(names().subject, [service], service);
        const release = signal();
        await bus.serve(spec, async () => {
          await release.promise;
          return {};
        });
        const error = await bus.request(spec, {}, { timeoutMs: 200 }).catch((caught: unknown) => caught);
        release.resolve();
        expect((error as ProblemError).status).toBe(504);
      });

      it('shares requests between replicas of a service, answering each once', async () => {
        const [first, second, caller] = [await newBus(), await newBus(), await newBus()];
        const spec = request<{ n: number }, { n: number; by: string }>(names().subject, [service], service);
        const handledBy: string[] = [];
        await first.serve(spec, async ({ n }) => (handledBy.push('first'), { n, by: 'first' }));
        await second.serve(spec, async ({ n }) => (handledBy.push('second'), { n, by: 'second' }));
        const replies = await Promise.all(Array.from({ length: 30 }, (_, n) => caller.request(spec, { n })));
        expect(replies.map((reply) => reply.n)).toEqual(Array.from({ length: 30 }, (_, n) => n));
        expect(handledBy).toHaveLength(30);
        expect(handledBy).toContain('first');
        expect(handledBy).toContain('second');
      });
    });

    describe('messages of several MB (chunked where the transport limits a message)', () => {
      const MB = 1024 * 1024;
      /** `bytes` of JSON string with multi-byte characters, so chunk boundaries split characters. */
      const text = (bytes: number, seed: string) => `${seed}é€`.repeat(Math.ceil(bytes / (seed.length + 5)));

      it('carries a request and a reply of several MB whole', async () => {
        const [server, client] = [await newBus(), await newBus()];
        const spec = request<{ text: string }, { length: number; text: string }>(names().subject, [service], service);
        await server.serve(spec, async (call, context) => ({
          length: call.text.length,
          text: `${context.actor?.userName}:${call.text}${call.text.slice(0, MB)}`,
        }));
        const sent = text(3 * MB, 'request');
        const reply = await client.request(spec, { text: sent }, { actor, timeoutMs: 60_000 });
        expect(reply.length).toBe(sent.length);
        expect(reply.text).toBe(`${actor.userName}:${sent}${sent.slice(0, MB)}`);
      });

      it('carries an HTTP reply of several MB whole, its body asked as text', async () => {
        const [server, client] = [await newBus(), await newBus()];
        const spec = request<{ size: number }, { status: number; headers: Record<string, string>; body: unknown }>(
          names().subject,
          [service],
          service,
        );
        const body = { text: text(3 * MB, 'reply'), note: 'naïve "quotes" \u2028' };
        await server.serve(spec, async () => ({ status: 200, headers: { 'x-note': 'é' }, body }));
        const reply = await client.request(spec, { size: 3 }, { timeoutMs: 60_000, replyBodyAsJsonText: true });
        expect(reply.status).toBe(200);
        expect(reply.headers).toEqual({ 'x-note': 'é' });
        expect(reply.body).toBeInstanceOf(JsonText);
        expect((reply.body as JsonText).text).toBe(JSON.stringify(body));
      });

      it('carries several large requests at once to replicas, each reply to its own caller', async () => {
        const [first, second, client] = [await newBus(), await newBus(), await newBus()];
        const spec = request<{ text: string }, { text: string }>(names().subject, [service], service);
        const reverse = async (call: { text: string }) => ({ text: [...call.text].reverse().join('') });
        await first.serve(spec, reverse);
        await second.serve(spec, reverse);
        const texts = ['a', 'b', 'c', 'd'].map((seed) => text(MB, seed));
        const replies = await Promise.all(
          texts.map((sent) => client.request(spec, { text: sent }, { timeoutMs: 60_000 })),
        );
        expect(replies.map((reply) => reply.text)).toEqual(texts.map((sent) => [...sent].reverse().join('')));
      });

      it('refuses a request over the maximum message size with a 413 problem, without waiting', async () => {
        const [server, client] = [await newBus({ maxMessageBytes: MB }), await newBus({ maxMessageBytes: MB })];
        const spec = request<{ text: string }, { ok: boolean }>(names().subject, [service], service);
        let handled = false;
        await server.serve(spec, async () => ((handled = true), { ok: true }));
        const error = await client
          .request(spec, { text: 'x'.repeat(2 * MB) }, { timeoutMs: 600_000 })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProblemError);
        expect((error as ProblemError).status).toBe(413);
        expect(handled).toBe(false);
      });

      it('answers 413 instead of a reply over the maximum message size', async () => {
        const [server, client] = [await newBus({ maxMessageBytes: MB }), await newBus({ maxMessageBytes: MB })];
        const spec = request<{ size: number }, { text: string }>(names().subject, [service], service);
        await server.serve(spec, async (call) => ({ text: 'y'.repeat(call.size) }));
        const error = await client
          .request(spec, { size: 2 * MB }, { timeoutMs: 600_000 })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProblemError);
        expect((error as ProblemError).status).toBe(413);
        expect(await client.request(spec, { size: 10 })).toEqual({ text: 'y'.repeat(10) });
      });

      it('answers 413 instead of an HTTP reply over the maximum message size, its body asked as text', async () => {
        const [server, client] = [await newBus({ maxMessageBytes: MB }), await newBus({ maxMessageBytes: MB })];
        const spec = request<{ size: number }, { status: number; body: { text: string } }>(
          names().subject,
          [service],
          service,
        );
        await server.serve(spec, async (call) => ({ status: 200, body: { text: 'y'.repeat(call.size) } }));
        const error = await client
          .request(spec, { size: 2 * MB }, { timeoutMs: 600_000, replyBodyAsJsonText: true })
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProblemError);
        expect((error as ProblemError).status).toBe(413);
        const small = await client.request(spec, { size: 10 }, { replyBodyAsJsonText: true });
        expect(JSON.stringify(small)).toBe(JSON.stringify({ status: 200, body: { text: 'y'.repeat(10) } }));
      });

      it('carries a work message of several MB whole, once, to one consumer', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ n: number; text: string }>(newStream(stream), subject, [service], service);
        const [consumer, producer] = [await newBus(), await newBus()];
        const handled = collector<{ n: number; text: string }>(2);
        await consumer.consume(spec, { durable: 'large' }, async (message) => handled.add(message.payload));
        const large = { n: 1, text: text(3 * MB, 'work') };
        await producer.enqueue(spec, large, { msgId: `${subject}-large` });
        await producer.enqueue(spec, large, { msgId: `${subject}-large` }); // duplicate: dropped
        await producer.enqueue(spec, { n: 2, text: 'small' });
        expect(await handled.done).toEqual([large, { n: 2, text: 'small' }]);
      });

      it('refuses a work message over the maximum message size with a 413 problem', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ text: string }>(newStream(stream), subject, [service], service);
        const bus = await newBus({ maxMessageBytes: MB });
        const error = await bus.enqueue(spec, { text: 'x'.repeat(2 * MB) }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(ProblemError);
        expect((error as ProblemError).status).toBe(413);
      });

      if (harness.failNextReply) {
        const failNextReply = harness.failNextReply;
        it('answers a problem, without waiting, when the reply cannot be sent', async () => {
          const [server, client] = [await newBus(), await newBus()];
          const spec = request<object, { ok: boolean }>(names().subject, [service], service);
          await server.serve(spec, async () => ({ ok: true }));
          failNextReply(server);
          const error = await client.request(spec, {}, { timeoutMs: 600_000 }).catch((caught: unknown) => caught);
          expect(error).toBeInstanceOf(ProblemError);
          expect((error as ProblemError).status).toBe(502);
          expect(await client.request(spec, {})).toEqual({ ok: true });
        });
      }
    });

    describe('work queues', () => {
      it('handles each message once across two consumers of one durable', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ n: number }>(newStream(stream), subject, [service], service);
        const [first, second, producer] = [await newBus(), await newBus(), await newBus()];
        const handled: Array<{ n: number; by: string }> = [];
        const sentinelSeen = signal();
        const consumeAs = (by: string) => async (message: WorkMessage<{ n: number }>) => {
          handled.push({ n: message.payload.n, by });
          if (message.payload.n === 20) sentinelSeen.resolve();
        };
        await first.consume(spec, { durable: 'workers', concurrency: 2 }, consumeAs('first'));
        await second.consume(spec, { durable: 'workers', concurrency: 2 }, consumeAs('second'));
        for (let n = 0; n < 20; n += 1) await producer.enqueue(spec, { n }, { msgId: `${subject}-${n}` });
        await producer.enqueue(spec, { n: 0 }, { msgId: `${subject}-0` }); // duplicate: dropped
        // Queued after the duplicate, so a duplicate that was kept is handed out before it; closing waits for
        // handlers in flight, so by then a late duplicate would have been handled.
        await producer.enqueue(spec, { n: 20 }, { msgId: `${subject}-sentinel` });
        await sentinelSeen.promise;
        await first.close();
        await second.close();
        expect(handled.map((item) => item.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 21 }, (_, n) => n));
      });

      it('redelivers a message whose handler threw', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ job: string }>(newStream(stream), subject, [service], service);
        const bus = await newBus();
        const deliveries = collector<number>(2);
        await bus.consume(spec, { durable: 'retrying', retryDelayMs: 50 }, async (message) => {
          deliveries.add(message.deliveryCount);
          if (message.deliveryCount === 1) throw new Error('transient');
        });
        await bus.enqueue(spec, { job: 'a' });
        expect(await deliveries.done).toEqual([1, 2]);
      });

      it('hands a message that failed its last delivery to the dead letter, acks it and goes on', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ poison: boolean }>(newStream(stream), subject, [service], service);
        const bus = await newBus();
        const poisonDeliveries: number[] = [];
        const healthyHandled = signal<number>();
        const deadLettered = signal<{ payload: unknown; deliveryCount: number; error: string }>();
        const deadLetter = {
          afterDeliveries: 2,
          record: async (message: WorkMessage<{ poison: boolean }>, error: unknown) =>
            deadLettered.resolve({
              payload: message.payload,
              deliveryCount: message.deliveryCount,
              error: (error as Error).message,
            }),
        };
        await bus.consume(spec, { durable: 'limited', deadLetter, retryDelayMs: 10 }, async (message) => {
          if (!message.payload.poison) return healthyHandled.resolve(message.deliveryCount);
          poisonDeliveries.push(message.deliveryCount);
          throw new Error('poison');
        });
        await bus.enqueue(spec, { poison: true });
        expect(await deadLettered.promise).toEqual({ payload: { poison: true }, deliveryCount: 2, error: 'poison' });
        await bus.enqueue(spec, { poison: false });
        expect(await healthyHandled.promise).toBe(1);
        expect(poisonDeliveries).toEqual([1, 2]);
        const lastAttempt = logLines.find((line) => line.subject === subject && line.lastAttempt === true);
        expect(lastAttempt).toMatchObject({ deliveryCount: 2, msg: 'work message failed' });
      });

      it('keeps a message whose dead letter cannot be recorded and offers it again', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ job: string }>(newStream(stream), subject, [service], service);
        const bus = await newBus();
        const recordAttempts: number[] = [];
        const recorded = signal<number>();
        const deadLetter = {
          afterDeliveries: 1,
          record: async (message: WorkMessage<{ job: string }>) => {
            recordAttempts.push(message.deliveryCount);
            // The dead-letter store is down the first two times: the message must survive that.
            if (recordAttempts.length < 3) throw new Error('dead-letter store down');
            recorded.resolve(message.deliveryCount);
          },
        };
        await bus.consume(spec, { durable: 'keeping', deadLetter, retryDelayMs: 10 }, async () => {
          throw new Error('always fails');
        });
        await bus.enqueue(spec, { job: 'precious' });
        expect(await recorded.promise).toBe(3);
        expect(recordAttempts).toEqual([1, 2, 3]);
      });

      it('takes no message while its gate is closed and takes them again once a slot frees', async () => {
        const { subject, stream } = names();
        const spec = workQueue<{ job: number }>(newStream(stream), subject, [service], service);
        const bus = await newBus();
        let free = 0;
        const waiting: Array<() => void> = [];
        const gate = {
          free: () => free,
          tryTake: () => {
            if (free <= 0) return undefined;
            free -= 1;
            return () => undefined;
          },
          whenFree: () => new Promise<void>((resolve) => waiting.push(resolve)),
        };
        const open = (slots: number) => {
          free += slots;
          for (const wake of waiting.splice(0)) wake();
        };
        const handled = collector<number>(2);
        const waitingForGate = signal();
        const waitFree = gate.whenFree;
        gate.whenFree = () => {
          waitingForGate.resolve();
          return waitFree();
        };
        await bus.consume(spec, { durable: 'gated', concurrency: 8, gate }, async (message) => {
          handled.add(message.payload.job);
        });
        await bus.enqueue(spec, { job: 1 });
        await bus.enqueue(spec, { job: 2 });
        await waitingForGate.promise;
        // Closed gate: both stay queued, whatever the handler concurrency.
        expect(handled.items).toEqual([]);
        open(1);
        await until(() => handled.items.length === 1);
        expect(handled.items).toEqual([1]);
        open(1);
        expect((await handled.done).sort()).toEqual([1, 2]);
      });

      if (harness.sharedQueues) {
        it('gives a message back to the queue when the gate of its replica closed after the pull, so an idle replica takes it', async () => {
          const { subject, stream } = names();
          const spec = workQueue<{ job: number }>(newStream(stream), subject, [service], service);
          const [busy, idle, producer] = [await newBus(), await newBus(), await newBus()];
          // One slot per replica, as an engine with WEFT_ENGINE_MAX_RUNNING_EXECUTIONS=1 has.
          const oneSlot = () => {
            let used = 0;
            const waiting: Array<() => void> = [];
            const pulling = signal();
            return {
              pulling,
              free: () => {
                pulling.resolve();
                return 1 - used;
              },
              tryTake: () => {
                if (used >= 1) return undefined;
                used += 1;
                return () => {
                  used -= 1;
                  for (const wake of waiting.splice(0)) wake();
                };
              },
              whenFree: () => (used < 1 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
            };
          };
          const busyGate = oneSlot();
          const handledBy = signal<string>();
          await busy.consume(spec, { durable: 'replicas', gate: busyGate }, async () => handledBy.resolve('busy'));
          // The busy replica has asked for a message; then other work takes its only slot.
          await busyGate.pulling.promise;
          busyGate.tryTake();
          await producer.enqueue(spec, { job: 1 });
          await new Promise((resolve) => setTimeout(resolve, 200));
          await idle.consume(spec, { durable: 'replicas', gate: oneSlot() }, async () => handledBy.resolve('idle'));
          const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 10_000));
          expect(await Promise.race([handledBy.promise, timeout])).toBe('idle');
        });
      }

      if (harness.crash) {
        const crash = harness.crash;
        it('redelivers to another replica when a consumer dies without acking', async () => {
          const { subject, stream } = names();
          const spec = workQueue<{ job: string }>(newStream(stream), subject, [service], service);
          const [doomed, survivor, producer] = [await newBus(), await newBus(), await newBus()];
          const started = signal<number>();
          const never = signal();
          await doomed.consume(spec, { durable: 'engines', ackWaitMs: 1000 }, async (message) => {
            started.resolve(message.deliveryCount);
            await never.promise;
          });
          await producer.enqueue(spec, { job: 'survives' });
          expect(await started.promise).toBe(1);
          await crash(doomed);
          const redelivered = signal<WorkMessage<{ job: string }>>();
          await survivor.consume(spec, { durable: 'engines', ackWaitMs: 1000 }, async (message) =>
            redelivered.resolve(message),
          );
          const message = await redelivered.promise;
          never.resolve();
          expect(message.payload).toEqual({ job: 'survives' });
          expect(message.deliveryCount).toBe(2);
        });
      }
    });

    describe('published events', () => {
      it('resumes a durable subscription after re-subscribing, and dedupes by msgId', async () => {
        const { subject, stream } = names();
        const bus = await newBus();
        await bus.ensureEventStream({ stream: newStream(stream), wildcard: `${subject}.>` });
        const firstRound = collector<PublishedEvent>(2);
        const subscription = await bus.subscribe(`${subject}.orders.*`, { durable: 'projector' }, async (event) =>
          firstRound.add(event),
        );
        await bus.publish(`${subject}.orders.1`, { n: 1 }, { msgId: 'e1' });
        await bus.publish(`${subject}.other.1`, { n: 99 }, { msgId: 'e-other' });
        await bus.publish(`${subject}.orders.2`, { n: 2 }, { msgId: 'e2' });
        await bus.publish(`${subject}.orders.2`, { n: 2 }, { msgId: 'e2' });
        expect((await firstRound.done).map((event) => event.payload)).toEqual([{ n: 1 }, { n: 2 }]);
        await subscription.unsubscribe();

        await bus.publish(`${subject}.orders.3`, { n: 3 }, { msgId: 'e3' });
        await bus.publish(`${subject}.orders.4`, { n: 4 }, { msgId: 'e4' });
        const secondRound = collector<PublishedEvent>(2);
        await bus.subscribe(`${subject}.orders.*`, { durable: 'projector' }, async (event) => secondRound.add(event));
        const resumed = await secondRound.done;
        expect(resumed.map((event) => event.payload)).toEqual([{ n: 3 }, { n: 4 }]);
        expect(resumed.map((event) => event.subject)).toEqual([`${subject}.orders.3`, `${subject}.orders.4`]);
        const sequences = [...firstRound.items, ...resumed].map((event) => event.sequence);
        expect([...sequences].sort((a, b) => a - b)).toEqual(sequences);
        expect(new Set(sequences).size).toBe(4);
      });
    });

    describe('trace context', () => {
      it('carries the sender trace and correlation id through requests, work queues and events', async () => {
        const { subject, stream } = names();
        const [sender, receiver] = [await newBus(), await newBus()];
        const spec = request<object, { traceId?: string; traceparent?: string }>(`${subject}.rpc`, [service], service);
        await receiver.serve(spec, async (_call, context) => ({
          traceId: currentTraceId(),
          traceparent: context.traceparent,
        }));
        const queue = workQueue<object>(newStream(stream), `${subject}.work`, [service], service);
        const worked = signal<{ traceId?: string; context: MessageContext }>();
        await receiver.consume(queue, { durable: 'tracer' }, async (message) =>
          worked.resolve({ traceId: currentTraceId(), context: message.context }),
        );
        const eventStream = newStream(`${stream}_EVENTS`);
        await sender.ensureEventStream({ stream: eventStream, wildcard: `${subject}.events.>` });
        const received = signal<{ traceId?: string; event: PublishedEvent }>();
        await receiver.subscribe(`${subject}.events.>`, { durable: 'tracer' }, async (event) =>
          received.resolve({ traceId: currentTraceId(), event }),
        );

        const { traceId, reply } = await withSpan('caller', {}, async () => {
          const options = { correlationId: 'corr-trace', actor };
          const answer = await sender.request(spec, {}, options);
          await sender.enqueue(queue, {}, options);
          await sender.publish(`${subject}.events.happened`, {}, { ...options, msgId: uniqueId() });
          return { traceId: currentTraceId(), reply: answer };
        });
        expect(traceId).toMatch(/^[0-9a-f]{32}$/);
        expect(reply.traceId).toBe(traceId);
        expect(reply.traceparent).toContain(traceId);
        const work = await worked.promise;
        expect(work.traceId).toBe(traceId);
        expect(work.context).toMatchObject({ correlationId: 'corr-trace', actor });
        expect(work.context.traceparent).toContain(traceId);
        const event = await received.promise;
        expect(event.traceId).toBe(traceId);
        expect(event.event.headers).toMatchObject({ 'weft-correlation-id': 'corr-trace' });
        expect(event.event.headers.traceparent).toContain(traceId);
        const handlerSpans = exporter
          .getFinishedSpans()
          .filter((span) => span.spanContext().traceId === traceId && span.name.startsWith('serve '));
        expect(handlerSpans).toHaveLength(1);
      });
    });
  });
}
