import {
  openDatabase,
  PostgresEventStore,
  WrongExpectedVersionError,
  type Database,
  type StreamAppend,
} from '@weft/event-store';
import { ExecutionEventWriter } from '../src/application/execution-event-writer.js';

/** Group commit on a real store (PGlite in memory): one transaction for a tick's appends, conflicts isolated. */
describe('execution event writer', () => {
  let database: Database;
  let store: PostgresEventStore;
  const commits: number[] = [];
  let writer: ExecutionEventWriter;

  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    store = await PostgresEventStore.open(database);
    // Never sent before the turn ends, however many wait: the tests below count one turn's batches.
    writer = new ExecutionEventWriter(
      async (batch: readonly StreamAppend[]) => {
        commits.push(batch.length);
        await store.appendMany(batch);
      },
      { eagerBatchAppends: Infinity },
    );
  });
  afterAll(async () => {
    await store.close();
    await database.close();
  });

  const event = (n: number) => ({ type: 'NodeCompleted', data: { n } });

  test('appends made in the same tick share one transaction, in order per stream', async () => {
    commits.length = 0;
    const streams = Array.from({ length: 50 }, () => `execution-${crypto.randomUUID()}`);
    await Promise.all(
      streams.flatMap((streamId) => [
        writer.append(streamId, [event(1)], 'no_stream'),
        writer.append(streamId, [event(2), event(3)], 1),
      ]),
    );
    expect(commits).toEqual([100]);
    const stored = await store.readStream(streams[7]!);
    expect(stored.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
  });

  test('a turn with many appends sends batches while it runs, each stream still in order', async () => {
    const eagerCommits: number[] = [];
    const eager = new ExecutionEventWriter(
      async (batch: readonly StreamAppend[]) => {
        eagerCommits.push(batch.length);
        await store.appendMany(batch);
      },
      { eagerBatchAppends: 16 },
    );
    // Three appends per stream: the first batch (16 appends) ends in the middle of a stream's.
    const streams = Array.from({ length: 40 }, () => `execution-${crypto.randomUUID()}`);
    const sentDuringTheTurn: number[] = [];
    await Promise.all(
      streams.flatMap((streamId) => {
        const appended = [
          eager.append(streamId, [event(1)], 'no_stream'),
          eager.append(streamId, [event(2), event(3)], 1),
          eager.append(streamId, [event(4)], 3),
        ];
        sentDuringTheTurn.push(eagerCommits.length);
        return appended;
      }),
    );
    // Two batches (the commit slots) leave as soon as 16 appends wait; the rest once a slot is free.
    expect(sentDuringTheTurn.at(-1)).toBe(2);
    expect(eagerCommits[0]).toBe(16);
    expect(eagerCommits.reduce((sum, size) => sum + size, 0)).toBe(120);
    for (const streamId of streams) {
      const stored = await store.readStream(streamId);
      expect(stored.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3, 4]);
    }
  });

  test('lazy appends and appends held behind a batch in flight do not make an early batch', async () => {
    const sizes: number[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const eager = new ExecutionEventWriter(
      async (batch: readonly StreamAppend[]) => {
        sizes.push(batch.length);
        if (sizes.length === 1) await firstHeld;
        await store.appendMany(batch);
      },
      { eagerBatchAppends: 16 },
    );
    const running = Array.from({ length: 16 }, () => `execution-${crypto.randomUUID()}`);
    const started = running.map((streamId) => eager.append(streamId, [event(1)], 'no_stream'));
    while (sizes.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // The 16 runs in the first batch queue their next (lazy) events; then 30 new runs arrive.
    const lazy = running.map((streamId) => eager.append(streamId, [event(2)], 1, { lazy: true }));
    const fresh = Array.from({ length: 30 }, () =>
      eager.append(`execution-${crypto.randomUUID()}`, [event(1)], 'no_stream'),
    );
    const sentDuringTheTurn = sizes.length;
    releaseFirst();
    await Promise.all([...started, ...lazy, ...fresh]);
    // One early batch of 16 of the new runs, never a batch of the first lazy append alone.
    expect(sentDuringTheTurn).toBe(2);
    expect(sizes.slice(0, 2)).toEqual([16, 16]);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(62);
  });

  test("a failed append fails its stream's appends queued after it, also across an early batch", async () => {
    const eager = new ExecutionEventWriter((batch) => store.appendMany(batch).then(() => undefined), {
      eagerBatchAppends: 16,
    });
    const run = `execution-${crypto.randomUUID()}`;
    await store.append(run, [event(1)], { expectedVersion: 'no_stream' });
    // Another engine cancels the run (version 2) while this engine's run still holds version 1.
    await store.append(run, [{ type: 'ExecutionCancelled', data: {} }], { expectedVersion: 1 });
    const others = Array.from({ length: 15 }, () =>
      eager.append(`execution-${crypto.randomUUID()}`, [event(1)], 'no_stream'),
    );
    // One stretch of the run: a node ends (the 16th append: the early batch leaves with it), the next starts.
    const ended = eager.append(run, [event(2)], 1);
    const next = eager.append(run, [event(3)], 2);
    const results = await Promise.allSettled([ended, next]);
    await Promise.all(others);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedVersionError);
    const stored = await store.readStream(run);
    expect(stored.map((e) => e.type)).toEqual(['NodeCompleted', 'ExecutionCancelled']);
  });

  test('with more queued, the next batch is on its way before the callers of the last one go on', async () => {
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let calls = 0;
    const held = new ExecutionEventWriter(async (batch: readonly StreamAppend[]) => {
      const call = ++calls;
      order.push(`commit ${call} sent`);
      if (call === 1) await firstHeld;
      await store.appendMany(batch);
    });
    const first = held
      .append(`execution-${crypto.randomUUID()}`, [event(1)], 'no_stream')
      .then(() => order.push('first caller goes on'));
    while (calls === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = held.append(`execution-${crypto.randomUUID()}`, [event(1)], 'no_stream');
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['commit 1 sent', 'commit 2 sent', 'first caller goes on']);
  });

  test('a second batch is sent while the first commits, never with a stream the first holds', async () => {
    // The first two commits wait until released: both stay in flight meanwhile.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sent: string[][] = [];
    const s = `execution-${crypto.randomUUID()}`;
    const t = `execution-${crypto.randomUUID()}`;
    const u = `execution-${crypto.randomUUID()}`;
    const names = new Map([
      [s, 's'],
      [t, 't'],
      [u, 'u'],
    ]);
    const pair = new ExecutionEventWriter(async (batch: readonly StreamAppend[]) => {
      sent.push(batch.map((item) => `${names.get(item.streamId)}${item.events.length}`));
      if (sent.length <= 2) await held;
      await store.appendMany(batch);
    });
    const first = pair.append(s, [event(1)], 'no_stream');
    while (sent.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // s is being written: its next append waits; t's goes out at once, beside the first batch.
    const later = [pair.append(s, [event(2), event(3)], 1), pair.append(t, [event(1)], 'no_stream')];
    while (sent.length < 2) await new Promise((resolve) => setImmediate(resolve));
    // Two batches in flight: a third waits for one of them, whatever its stream.
    const third = pair.append(u, [event(1)], 'no_stream');
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([['s1'], ['t1']]);
    release();
    await Promise.all([first, ...later, third]);
    await pair.idle();
    expect(sent.slice(2).flat().sort()).toEqual(['s2', 'u1']);
    expect((await store.readStream(s)).map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
  });

  test('callers go on in commit order, and idle() returns once every caller was resolved', async () => {
    // One append per batch, on PGlite, whose commits can finish within one turn of the event loop.
    const oneByOne = new ExecutionEventWriter(
      (batch: readonly StreamAppend[]) => store.appendMany(batch).then(() => {}),
      {
        maxBatchEvents: 1,
      },
    );
    const resolved: string[] = [];
    const s = `execution-${crypto.randomUUID()}`;
    const t = `execution-${crypto.randomUUID()}`;
    const appends = [
      oneByOne.append(s, [event(1)], 'no_stream').then(() => resolved.push('s1')),
      oneByOne.append(t, [event(1)], 'no_stream').then(() => resolved.push('t1')),
      oneByOne.append(s, [event(2)], 1).then(() => resolved.push('s2')),
      oneByOne.append(t, [event(2)], 1).then(() => resolved.push('t2')),
    ];
    await oneByOne.idle();
    await Promise.resolve();
    expect(resolved).toEqual(['s1', 't1', 's2', 't2']);
    await Promise.all(appends);
  });

  test('a stream that changed elsewhere fails alone; the rest of the batch commits', async () => {
    const moved = `execution-${crypto.randomUUID()}`;
    await store.append(moved, [event(0)]);
    const fine = `execution-${crypto.randomUUID()}`;
    const results = await Promise.allSettled([
      writer.append(fine, [event(1)], 'no_stream'),
      writer.append(moved, [event(1)], 'no_stream'),
      writer.append(moved, [event(2)], 1),
      writer.append(fine, [event(2)], 1),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedVersionError);
    expect(await store.streamVersion(fine)).toBe(2);
    expect(await store.streamVersion(moved)).toBe(1);
  });
});
