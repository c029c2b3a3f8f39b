import { createLogger } from '@weft/observability';
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
