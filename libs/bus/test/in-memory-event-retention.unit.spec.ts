import { createLogger } from '@weft/observability';
import { InMemoryEventStreams } from '../src/adapters/in-memory/in-memory-event-streams.js';
import { InMemoryTimers } from '../src/adapters/in-memory/in-memory-timers.js';

describe('in-memory event streams retention', () => {
  test('keeps the newest maxMessages events (discard old), so an embedded process stays bounded', async () => {
    const timers = new InMemoryTimers();
    const streams = new InMemoryEventStreams(timers, createLogger('test', { level: 'silent' }), 10);
    streams.ensure({ stream: 'S', wildcard: 'retention.>' });
    for (let i = 1; i <= 25; i++) await streams.publish(`retention.${i}`, { i }, { msgId: `m${i}` });

    const seen: number[] = [];
    const subscription = streams.subscribe('retention.>', 'late', async (event) => {
      seen.push((event.payload as { i: number }).i);
    });
    await streams.settled();
    expect(seen).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);

    // A subscriber keeps its place while newer events arrive and older ones are discarded.
    await streams.publish('retention.26', { i: 26 }, { msgId: 'm26' });
    await streams.publish('retention.26', { i: 26 }, { msgId: 'm26' });
    await streams.settled();
    expect(seen.at(-1)).toBe(26);
    expect(seen).toHaveLength(11);
    await subscription.unsubscribe();
    timers.clear();
  });

  test('the dedupe window is the retained events, across many windows of discarded ones', async () => {
    const timers = new InMemoryTimers();
    const streams = new InMemoryEventStreams(timers, createLogger('test', { level: 'silent' }), 4);
    streams.ensure({ stream: 'S', wildcard: 'window.>' });
    for (let i = 1; i <= 30; i++) await streams.publish(`window.${i}`, { i }, { msgId: `m${i}` });
    // m29 is retained: a duplicate; m3 was discarded long ago: stored again, as JetStream would.
    await streams.publish('window.29', { i: -29 }, { msgId: 'm29' });
    await streams.publish('window.3', { i: 3 }, { msgId: 'm3' });

    const seen: number[] = [];
    const subscription = streams.subscribe('window.>', 'late', async (event) => {
      seen.push((event.payload as { i: number }).i);
    });
    await streams.settled();
    expect(seen).toEqual([28, 29, 30, 3]);
    await subscription.unsubscribe();
    timers.clear();
  });
});
