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

  test('by interest: an event no durable takes when it is published is not kept, not even for a later durable', async () => {
    const timers = new InMemoryTimers();
    const streams = new InMemoryEventStreams(timers, createLogger('test', { level: 'silent' }), 100, 'interest');
    streams.ensure({ stream: 'S', wildcard: 'interest.>' });
    const seen = (into: string[]) => async (event: { subject: string }) => void into.push(event.subject);
    expect(streams.hasInterest('interest.a.1')).toBe(false);
    await streams.publish('interest.a.1', {}, { msgId: 'm1' });

    const onA: string[] = [];
    const a = streams.subscribe('interest.a.>', 'a', seen(onA));
    expect(streams.hasInterest('interest.a.2')).toBe(true);
    expect(streams.hasInterest('interest.b.2')).toBe(false);
    await streams.publish('interest.a.2', {}, { msgId: 'm2' });
    await streams.publish('interest.b.2', {}, { msgId: 'm3' });
    // A durable created now gets only what was kept: the event the first one took.
    const onAll: string[] = [];
    const all = streams.subscribe('interest.>', 'all', seen(onAll));
    await streams.publish('interest.b.3', {}, { msgId: 'm4' });
    await streams.settled();
    expect(onA).toEqual(['interest.a.2']);
    expect(onAll).toEqual(['interest.a.2', 'interest.b.3']);
    await Promise.all([a.unsubscribe(), all.unsubscribe()]);
    timers.clear();
  });

  test('by limits (the default), every event is kept for a durable created later, and interest is always there', async () => {
    const timers = new InMemoryTimers();
    const streams = new InMemoryEventStreams(timers, createLogger('test', { level: 'silent' }));
    streams.ensure({ stream: 'S', wildcard: 'limits.>' });
    expect(streams.hasInterest('limits.x')).toBe(true);
    await streams.publish('limits.x', {}, { msgId: 'm1' });
    const seen: string[] = [];
    const late = streams.subscribe('limits.>', 'late', async (event) => void seen.push(event.subject));
    await streams.settled();
    expect(seen).toEqual(['limits.x']);
    await late.unsubscribe();
    timers.clear();
  });
});
