import { createLogger, currentTraceId, initTelemetry, withSpan } from '@weft/observability';
import { InMemoryEventStreams } from '../src/adapters/in-memory/in-memory-event-streams.js';
import { InMemoryTimers } from '../src/adapters/in-memory/in-memory-timers.js';

/**
 * A durable whose filter takes a part of the stream (embedded, the trigger service takes process
 * events among every run's events): what it does not take is passed over without a delivery
 * round, and what it takes still arrives once, in order, whatever it was doing meanwhile.
 */
describe('in-memory durable with a filter', () => {
  const setup = () => {
    const timers = new InMemoryTimers();
    const streams = new InMemoryEventStreams(timers, createLogger('test', { level: 'silent' }));
    streams.ensure({ stream: 'S', wildcard: 'f.>' });
    let msg = 0;
    const publish = (subject: string, i: number) => streams.publish(subject, { i }, { msgId: `m${++msg}` });
    return { timers, streams, publish };
  };

  test('takes its events in order among others, also while it is busy with one', async () => {
    const { timers, streams, publish } = setup();
    const seen: number[] = [];
    const subscription = streams.subscribe('f.process.>', 'd', async (event) => {
      // Slow: more events arrive while it handles this one.
      await new Promise((resolve) => setTimeout(resolve, 2));
      seen.push((event.payload as { i: number }).i);
    });
    for (let i = 1; i <= 30; i++) await publish(i % 3 === 0 ? `f.process.o.p${i}` : `f.execution.o.e${i}`, i);
    await new Promise((resolve) => setTimeout(resolve, 40));
    await streams.settled();
    expect(seen).toEqual([3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    await subscription.unsubscribe();
    timers.clear();
  });

  test('without a subscriber it keeps its place: what it takes waits for the next one', async () => {
    const { timers, streams, publish } = setup();
    const seen: number[] = [];
    const first = streams.subscribe('f.process.>', 'd', async (event) => {
      seen.push((event.payload as { i: number }).i);
    });
    await publish('f.execution.o.e1', 1);
    await publish('f.process.o.p2', 2);
    await streams.settled();
    await first.unsubscribe();
    await publish('f.execution.o.e3', 3);
    await publish('f.process.o.p4', 4);
    await publish('f.execution.o.e5', 5);
    const second = streams.subscribe('f.process.>', 'd', async (event) => {
      seen.push((event.payload as { i: number }).i);
    });
    await streams.settled();
    expect(seen).toEqual([2, 4]);
    await second.unsubscribe();
    timers.clear();
  });

  test('a repeated msgId stores nothing and moves no durable past an event it has not had', async () => {
    const { timers, streams } = setup();
    const seen: number[] = [];
    const handler = async (event: { payload: unknown }) => void seen.push((event.payload as { i: number }).i);
    const first = streams.subscribe('f.process.>', 'd', handler);
    await streams.publish('f.process.o.p1', { i: 1 }, { msgId: 'm1' });
    await streams.settled();
    await first.unsubscribe();
    await streams.publish('f.execution.o.e2', { i: 2 }, { msgId: 'm2' });
    await streams.publish('f.process.o.p3', { i: 3 }, { msgId: 'm3' });
    // The relay publishing m2 again (after a restart): deduplicated, as JetStream does.
    await streams.publish('f.execution.o.e2', { i: 2 }, { msgId: 'm2' });
    const second = streams.subscribe('f.process.>', 'd', handler);
    await streams.settled();
    expect(seen).toEqual([1, 3]);
    await second.unsubscribe();
    timers.clear();
  });

  test('an event it takes, stored while another publish was still in its span, is delivered', async () => {
    // With tracing on, a publish spends several ticks in its span after storing its event: the
    // durable can finish a delivery and a later publish store a matching event meanwhile. Every
    // interleaving of three delays (the handler's, and before each of two publishes) is tried.
    process.env.OTEL_TRACES_EXPORTER = 'none';
    const telemetry = initTelemetry('durable-filter-test');
    const ticks = async (count: number) => {
      for (let i = 0; i < count; i++) await Promise.resolve();
    };
    const lost: string[] = [];
    try {
      for (let h = 0; h < 7; h++)
        for (let a = 0; a < 7; a++)
          for (let b = 0; b < 7; b++) {
            const { timers, streams } = setup();
            const seen: number[] = [];
            const publishes: Promise<void>[] = [];
            const subscription = streams.subscribe('f.process.>', 'd', async (event) => {
              const { i } = event.payload as { i: number };
              if (i === 0) {
                publishes.push(ticks(a).then(() => streams.publish('f.execution.o.A', { i: 1 }, { msgId: 'A' })));
                publishes.push(ticks(b).then(() => streams.publish('f.process.o.B', { i: 2 }, { msgId: 'B' })));
                await ticks(h);
              }
              seen.push(i);
            });
            await streams.publish('f.process.o.P', { i: 0 }, { msgId: 'P' });
            while (publishes.length < 2) await new Promise((resolve) => setImmediate(resolve));
            await Promise.all(publishes);
            await streams.settled();
            await new Promise((resolve) => setImmediate(resolve));
            await streams.settled();
            if (!seen.includes(2)) lost.push(`handler ${h}, A after ${a}, B after ${b}: ${JSON.stringify(seen)}`);
            await subscription.unsubscribe();
            timers.clear();
          }
    } finally {
      await telemetry.shutdown();
      delete process.env.OTEL_TRACES_EXPORTER;
    }
    expect(lost).toEqual([]);
  });

  test('an event published outside a trace is handled in a trace of its own, not in the one that began delivering', async () => {
    const telemetry = initTelemetry('durable-trace-test');
    const { timers, streams } = setup();
    const traces: Array<string | undefined> = [];
    let release = (): void => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const subscription = streams.subscribe('f.process.>', 'd', async (event) => {
      traces.push(currentTraceId());
      if ((event.payload as { i: number }).i === 1) await slow;
    });
    // The subscription's first (empty) delivery round is over: the next starts with a publish.
    await streams.settled();
    // The delivery loop starts inside a request and is still busy with its event...
    const requestTrace = await withSpan('request', {}, async () => {
      await streams.publish('f.process.o.p1', { i: 1 }, { msgId: 'm1' });
      return currentTraceId();
    });
    // ... when the relay (outside any trace) publishes the next one.
    await streams.publish('f.process.o.p2', { i: 2 }, { msgId: 'm2' });
    release();
    while (traces.length < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(traces[0]).toBe(requestTrace);
    expect(traces[1]).toMatch(/^[0-9a-f]{32}$/);
    expect(traces[1]).not.toBe(requestTrace);
    await subscription.unsubscribe();
    timers.clear();
    await telemetry.shutdown();
  });

  test('a failed delivery is retried before later events, taken or passed over', async () => {
    const { timers, streams, publish } = setup();
    const seen: number[] = [];
    let failures = 1;
    const subscription = streams.subscribe('f.process.>', 'd', async (event) => {
      const { i } = event.payload as { i: number };
      if (i === 2 && failures-- > 0) throw new Error('once');
      seen.push(i);
    });
    await publish('f.process.o.p2', 2);
    await streams.settled();
    // Redelivery is scheduled; these arrive while it waits.
    await publish('f.execution.o.e3', 3);
    await publish('f.process.o.p4', 4);
    await publish('f.execution.o.e5', 5);
    for (let wait = 0; wait < 100 && seen.length < 2; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([2, 4]);
    await subscription.unsubscribe();
    timers.clear();
  });
});
