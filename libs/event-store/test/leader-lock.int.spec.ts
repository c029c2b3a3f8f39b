import { randomInt } from 'node:crypto';
import { SessionAdvisoryLock } from '../src/index.js';
import { openTestStore, type TestStore } from './support/test-database.js';

describe('SessionAdvisoryLock on PostgreSQL', () => {
  let t: TestStore;
  const locks: SessionAdvisoryLock[] = [];
  beforeEach(async () => {
    t = await openTestStore('postgres');
  });
  afterEach(async () => {
    // A held lock pins a pooled connection; release before closing the pool.
    await Promise.all(locks.splice(0).map((lock) => lock.release()));
    await t.dispose();
  });

  test('a losing attempt never looks held while it runs; the holder keeps it until release', async () => {
    const keys = [randomInt(1, 2 ** 31 - 1), randomInt(1, 2 ** 31 - 1)] as const;
    const holder = new SessionAdvisoryLock(t.database, keys);
    const contender = new SessionAdvisoryLock(t.database, keys);
    locks.push(holder, contender);
    expect(await holder.tryAcquire()).toBe(true);

    for (let attempt = 0; attempt < 20; attempt++) {
      let seenHeld = false;
      let settled = false;
      const pending = contender.tryAcquire().finally(() => (settled = true));
      while (!settled) {
        seenHeld ||= contender.isHeld();
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await pending).toBe(false);
      expect(seenHeld).toBe(false);
    }
    expect(holder.isHeld()).toBe(true);

    await holder.release();
    expect(holder.isHeld()).toBe(false);
    expect(await contender.tryAcquire()).toBe(true);
    expect(contender.isHeld()).toBe(true);
    await contender.release();
  });
});
