import { randomUUID } from 'node:crypto';
import type { StoredEvent } from '../src/index.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

describe.each(DIALECTS)('catch-up subscriptions on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('sees every event of many concurrent appenders exactly once, in position order, with no gaps', async () => {
    const start = await t.store.headPosition();
    const seen: StoredEvent[] = [];
    const subscription = t.store.subscribe(`all-${randomUUID()}`, async (event) => void seen.push(event), {
      batchSize: 7,
      pollMs: 20,
    });
    const writers = 12;
    const appendsPerWriter = 15;
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        const streamId = `execution-${randomUUID()}`;
        for (let i = 0; i < appendsPerWriter; i += 1) {
          // Mix single appends and multi-stream batches, as group commit does.
          if (i % 5 === 4) {
            await t.store.appendMany([
              { streamId, events: [{ type: 'NodeCompleted', data: { writer, i } }], expectedVersion: i },
              { streamId: `execution-${randomUUID()}`, events: [{ type: 'ExecutionStarted', data: { writer, i } }] },
            ]);
          } else {
            await t.store.append(streamId, [{ type: 'NodeCompleted', data: { writer, i } }], { expectedVersion: i });
          }
        }
      }),
    );
    const committed = await t.store.readAll({ fromPosition: start });
    expect(committed).toHaveLength(writers * appendsPerWriter + writers * (appendsPerWriter / 5));
    await subscription.waitForPosition(committed[committed.length - 1]!.position);
    await subscription.stop();

    const ours = seen.filter((event) => event.position > start);
    expect(ours.map((e) => e.eventId)).toEqual(committed.map((e) => e.eventId));
    expect(new Set(ours.map((e) => e.eventId)).size).toBe(ours.length);
  });

  it('resumes from its checkpoint after stop, and sees only the types it asked for', async () => {
    const name = `resume-${randomUUID()}`;
    const streamId = `process-${randomUUID()}`;
    const seen: string[] = [];
    const handler = async (event: StoredEvent) =>
      void seen.push(`${event.type}:${String((event.data as { n: number }).n)}`);
    const options = { eventTypes: ['Wanted'], pollMs: 20 };

    const first = await t.store.append(streamId, [
      { type: 'Wanted', data: { n: 1 } },
      { type: 'Other', data: { n: 2 } },
    ]);
    const subscription = t.store.subscribe(name, handler, options);
    await subscription.waitForPosition(first.events[1]!.position);
    await subscription.stop();

    const second = await t.store.append(streamId, [
      { type: 'Wanted', data: { n: 3 } },
      { type: 'Wanted', data: { n: 4 } },
    ]);
    const resumed = t.store.subscribe(name, handler, options);
    await resumed.waitForPosition(second.events[1]!.position);
    await resumed.stop();

    // Events before the first start are delivered too: a new subscription starts at position 0.
    expect(seen.filter((s) => s.startsWith('Wanted:')).slice(-3)).toEqual(['Wanted:1', 'Wanted:3', 'Wanted:4']);
    expect(seen).not.toContain('Other:2');
    expect(seen.filter((s) => s === 'Wanted:1')).toHaveLength(1);
  });

  it('retries a failing event without skipping it, and keeps the handled ones handled', async () => {
    const type = `Flaky${randomUUID().slice(0, 8)}`;
    const streamId = `process-${randomUUID()}`;
    const appended = await t.store.append(
      streamId,
      [1, 2, 3].map((n) => ({ type, data: { n } })),
    );
    const handled: number[] = [];
    const errors: unknown[] = [];
    let failuresLeft = 2;
    const subscription = t.store.subscribe(
      `flaky-${randomUUID()}`,
      async (event) => {
        const n = (event.data as { n: number }).n;
        if (n === 2 && failuresLeft-- > 0) throw new Error('transient');
        handled.push(n);
      },
      { eventTypes: [type], pollMs: 10, onError: (error) => errors.push(error) },
    );
    await subscription.waitForPosition(appended.events[2]!.position);
    await subscription.stop();
    expect(handled).toEqual([1, 2, 3]);
    expect(errors).toHaveLength(2);
  });
});
