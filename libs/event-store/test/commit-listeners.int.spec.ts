import { randomUUID } from 'node:crypto';
import { openDatabase, PostgresEventStore, WrongExpectedVersionError, type StoredEvent } from '../src/index.js';
import { DIALECTS, openTestStore, testDatabaseUrl, type TestStore } from './support/test-database.js';

type Heard = readonly StoredEvent[] | undefined;

describe.each(DIALECTS)('PostgresEventStore.onCommit on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
  });
  afterAll(async () => {
    await t.dispose();
  });

  const listen = () => {
    const heard: Heard[] = [];
    const stop = t.store.onCommit((events) => heard.push(events));
    return { heard, stop };
  };

  it('hears each committed append with its events, positions assigned, and nothing after it stops', async () => {
    const { heard, stop } = listen();
    const streamId = `process-${randomUUID()}`;
    const first = await t.store.append(streamId, [{ type: 'ProcessCreated', data: {} }], {
      expectedVersion: 'no_stream',
    });
    await t.store.appendMany([
      { streamId, events: [{ type: 'ProcessRenamed', data: { name: 'b' } }], expectedVersion: 1 },
      { streamId: `execution-${randomUUID()}`, events: [{ type: 'ExecutionStarted', data: {} }] },
    ]);
    stop();
    await t.store.append(streamId, [{ type: 'ProcessRenamed', data: { name: 'c' } }]);

    expect(heard).toHaveLength(2);
    expect(heard[0]).toEqual(first.events);
    expect(heard[1]!.map((event) => [event.streamId.split('-')[0], event.streamVersion])).toEqual([
      ['process', 2],
      ['execution', 1],
    ]);
    expect(heard[1]!.every((event) => event.position > first.events[0]!.position)).toBe(true);
  });

  it('hears a refused append as an unknown outcome, never as events', async () => {
    const { heard, stop } = listen();
    const streamId = `process-${randomUUID()}`;
    await t.store.append(streamId, [{ type: 'ProcessCreated', data: {} }]);
    await expect(
      t.store.append(streamId, [{ type: 'ProcessRenamed', data: {} }], { expectedVersion: 'no_stream' }),
    ).rejects.toBeInstanceOf(WrongExpectedVersionError);
    stop();
    expect(heard.at(-1)).toBeUndefined();
    expect(heard.filter((events) => events !== undefined)).toHaveLength(1);
  });

  if (dialect === 'postgres')
    it("hears another process's append (its NOTIFY) as an unknown outcome", async () => {
      await t.store.listenForAppends();
      const { heard, stop } = listen();
      const otherDatabase = await openDatabase({ url: testDatabaseUrl(), schema: t.database.schema });
      try {
        const other = await PostgresEventStore.open(otherDatabase);
        await other.append(`process-${randomUUID()}`, [{ type: 'ProcessCreated', data: {} }]);
        const deadline = Date.now() + 5000;
        while (!heard.includes(undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        await other.close();
      } finally {
        await otherDatabase.close();
        stop();
      }
      expect(heard).toContain(undefined);
    });
});
