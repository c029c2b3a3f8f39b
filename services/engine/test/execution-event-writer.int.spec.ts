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
    writer = new ExecutionEventWriter(async (batch: readonly StreamAppend[]) => {
      commits.push(batch.length);
      await store.appendMany(batch);
    });
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
