import { randomUUID } from 'node:crypto';
import { WrongExpectedVersionError, type NewEvent } from '../src/index.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

const event = (type: string, data: unknown = {}, metadata = {}): NewEvent => ({ type, data, metadata });
const streamOf = (prefix: string) => `${prefix}-${randomUUID()}`;

describe.each(DIALECTS)('PostgresEventStore on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('appends events and reads them back with versions, positions and metadata', async () => {
    const streamId = streamOf('process');
    const metadata = { actorId: 'u-1', actorName: 'Ada', organizationId: 'org-1', correlationId: 'c-1' };
    const result = await t.store.append(
      streamId,
      [
        event('ProcessCreated', { name: 'Invoices', tags: ['a', 'b'] }, metadata),
        event('ProcessRenamed', ['array', 'data']),
      ],
      { expectedVersion: 'no_stream' },
    );
    expect(result.nextExpectedVersion).toBe(2);
    expect(result.events.map((e) => e.streamVersion)).toEqual([1, 2]);
    expect(result.events[1]!.position).toBeGreaterThan(result.events[0]!.position);

    const read = await t.store.readStream(streamId);
    expect(read).toEqual(result.events);
    expect(read[0]).toMatchObject({
      streamId,
      type: 'ProcessCreated',
      schemaVersion: 1,
      data: { name: 'Invoices', tags: ['a', 'b'] },
      metadata,
    });
    expect(read[1]!.data).toEqual(['array', 'data']);
    expect(read[0]!.recordedAt).toBeInstanceOf(Date);
    expect(await t.store.streamVersion(streamId)).toBe(2);
    expect(await t.store.streamVersion(streamOf('missing'))).toBe(0);
    expect(await t.store.readStream(streamId, { fromVersion: 2 })).toEqual([read[1]]);
  });

  it('keeps a caller-chosen event id and schema version', async () => {
    const eventId = randomUUID();
    const streamId = streamOf('process');
    await t.store.append(streamId, [{ type: 'ProcessCreated', data: {}, eventId, schemaVersion: 4 }]);
    const [stored] = await t.store.readStream(streamId);
    expect(stored).toMatchObject({ eventId, schemaVersion: 4 });
  });

  it('rebuilds state at a past time with readStream({until})', async () => {
    const streamId = streamOf('process');
    await t.store.append(streamId, [event('ProcessCreated')]);
    const [first] = await t.store.readStream(streamId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await t.store.append(streamId, [event('ProcessRenamed')], { expectedVersion: 1 });
    const untilFirst = await t.store.readStream(streamId, { until: first!.recordedAt });
    expect(untilFirst.map((e) => e.type)).toEqual(['ProcessCreated']);
    expect(await t.store.readStream(streamId, { until: new Date(Date.now() + 60_000) })).toHaveLength(2);
  });

  it('rejects a stale append with WrongExpectedVersionError and writes nothing', async () => {
    const streamId = streamOf('process');
    await t.store.append(streamId, [event('ProcessCreated'), event('ProcessRenamed')]);
    await expect(t.store.append(streamId, [event('ProcessLocked')], { expectedVersion: 1 })).rejects.toThrow(
      WrongExpectedVersionError,
    );
    await expect(
      t.store.append(streamId, [event('ProcessCreated')], { expectedVersion: 'no_stream' }),
    ).rejects.toMatchObject({
      name: 'WrongExpectedVersionError',
      streamId,
      actual: 2,
    });
    await expect(
      t.store.append(streamOf('process'), [event('ProcessLocked')], { expectedVersion: 'stream_exists' }),
    ).rejects.toThrow(WrongExpectedVersionError);
    expect(await t.store.streamVersion(streamId)).toBe(2);
    await t.store.append(streamId, [event('ProcessLocked')], { expectedVersion: 2 });
    expect(await t.store.streamVersion(streamId)).toBe(3);
  });

  it('lets exactly one of many concurrent appenders to the same stream win', async () => {
    const streamId = streamOf('execution');
    await t.store.append(streamId, [event('ExecutionStarted')]);
    const attempts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        t.store.append(streamId, [event('NodeCompleted', { i })], { expectedVersion: 1 }),
      ),
    );
    const won = attempts.filter((a) => a.status === 'fulfilled');
    const lost = attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(7);
    for (const failure of lost) expect(failure.reason).toBeInstanceOf(WrongExpectedVersionError);
    expect(await t.store.readStream(streamId)).toHaveLength(2);
  });

  it('appendMany writes several streams in one transaction, all or nothing', async () => {
    const a = streamOf('execution');
    const b = streamOf('execution');
    const results = await t.store.appendMany([
      { streamId: a, events: [event('ExecutionStarted'), event('NodeCompleted')], expectedVersion: 'no_stream' },
      { streamId: b, events: [event('ExecutionStarted')], expectedVersion: 'no_stream' },
      { streamId: a, events: [event('ExecutionCompleted')], expectedVersion: 2 },
    ]);
    expect(results.map((r) => r.nextExpectedVersion)).toEqual([2, 1, 3]);
    expect(results[2]!.events[0]!.streamVersion).toBe(3);
    const positions = results.flatMap((r) => r.events.map((e) => e.position));
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);

    const c = streamOf('execution');
    await expect(
      t.store.appendMany([
        { streamId: c, events: [event('ExecutionStarted')], expectedVersion: 'no_stream' },
        { streamId: b, events: [event('ExecutionCompleted')], expectedVersion: 5 },
      ]),
    ).rejects.toThrow(WrongExpectedVersionError);
    expect(await t.store.streamVersion(c)).toBe(0);
    expect(await t.store.streamVersion(b)).toBe(1);
  });

  it('readAll returns events after a position in order, filtered by type and limited', async () => {
    const head = await t.store.headPosition();
    const streamId = streamOf('process');
    await t.store.append(streamId, [event('A'), event('B'), event('A'), event('C')]);
    const all = await t.store.readAll({ fromPosition: head });
    expect(all.map((e) => e.type)).toEqual(['A', 'B', 'A', 'C']);
    expect((await t.store.readAll({ fromPosition: head, eventTypes: ['A', 'C'] })).map((e) => e.type)).toEqual([
      'A',
      'A',
      'C',
    ]);
    expect(await t.store.readAll({ fromPosition: head, limit: 2 })).toEqual(all.slice(0, 2));
    expect(await t.store.readAll({ fromPosition: all[1]!.position })).toEqual(all.slice(2));
  });

  it('applies registered upcasters on readStream, readAll and subscriptions', async () => {
    const type = `Upcast${randomUUID().slice(0, 8)}`;
    t.store.registerUpcasters({ [type]: { 1: (data: { n: number }) => ({ n: data.n, doubled: data.n * 2 }) } });
    const streamId = streamOf('process');
    const appended = await t.store.append(streamId, [{ type, data: { n: 2 } }]);
    const expected = { data: { n: 2, doubled: 4 }, schemaVersion: 2 };
    expect(appended.events[0]).toMatchObject(expected);
    expect((await t.store.readStream(streamId))[0]).toMatchObject(expected);
    expect((await t.store.readAll({ fromPosition: appended.events[0]!.position - 1, limit: 1 }))[0]).toMatchObject(
      expected,
    );
    const seen: unknown[] = [];
    const subscription = t.store.subscribe(`upcast-${randomUUID()}`, async (e) => void seen.push(e.data), {
      eventTypes: [type],
      pollMs: 50,
    });
    await subscription.waitForPosition(appended.events[0]!.position);
    await subscription.stop();
    expect(seen).toEqual([expected.data]);
  });
});
