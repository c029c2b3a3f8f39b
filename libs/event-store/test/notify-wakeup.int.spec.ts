import { randomUUID } from 'node:crypto';
import { openDatabase, PostgresEventStore, type StoredEvent } from '../src/index.js';
import { openTestStore, testDatabaseUrl, type TestStore } from './support/test-database.js';

describe('LISTEN/NOTIFY wake-up on PostgreSQL', () => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore('postgres');
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('wakes a subscriber when another process (another pool and store) appends', async () => {
    const seen: StoredEvent[] = [];
    // A poll interval longer than the test timeout: only the NOTIFY can deliver the event in time.
    const subscription = t.store.subscribe(`notify-${randomUUID()}`, async (event) => void seen.push(event), {
      pollMs: 10 * 60_000,
    });
    await subscription.waitForPosition(await t.store.headPosition());
    await t.store.listenForAppends();

    const otherDatabase = await openDatabase({ url: testDatabaseUrl(), schema: t.database.schema });
    try {
      const other = await PostgresEventStore.open(otherDatabase);
      const { events } = await other.append(`execution-${randomUUID()}`, [{ type: 'ExecutionStarted', data: {} }]);
      await subscription.waitForPosition(events[0]!.position);
      expect(seen.map((event) => event.eventId)).toContain(events[0]!.eventId);
      await other.close();
    } finally {
      await otherDatabase.close();
      await subscription.stop();
    }
  });
  it('skips the NOTIFY of its own appends: they woke its loops in process already', async () => {
    await t.store.listenForAppends();
    const before = t.store.appendSignal.current;
    await t.store.append(`execution-${randomUUID()}`, [{ type: 'ExecutionStarted', data: {} }]);
    // Room for the NOTIFY to come back over the listening connection (it takes milliseconds).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(t.store.appendSignal.current - before).toBe(1);
  });
});
