import { MapLettingGo } from '@weft/collections';

/**
 * Reads by key that go to the database together: a read starts a query at once when none is
 * running, and reads asked for meanwhile wait for it and then share the next one. One caller pays
 * nothing extra; fifty concurrent synchronous runs make one statement where they made fifty. Each
 * read is answered by a query that started after it was asked for, so it sees every write that
 * committed before. Waiters are kept in a MapLettingGo: a Map's discarded hash tables would keep
 * each answered read's callers alive until the next full collection.
 */
export class ReadBatcher<K, V> {
  private readonly queued = new MapLettingGo<
    K,
    { resolve: (value: V | undefined) => void; reject: (error: unknown) => void }[]
  >();
  private running = false;

  constructor(
    private readonly readMany: (keys: K[]) => Promise<Map<K, V>>,
    private readonly maxBatch = 500,
  ) {}

  read(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.queued.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.queued.set(key, [{ resolve, reject }]);
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queued.size > 0) {
        const batch = [...this.queued].slice(0, this.maxBatch);
        for (const [key] of batch) this.queued.delete(key);
        try {
          const found = await this.readMany(batch.map(([key]) => key));
          for (const [key, waiters] of batch) for (const waiter of waiters) waiter.resolve(found.get(key));
        } catch (error) {
          for (const [, waiters] of batch) for (const waiter of waiters) waiter.reject(error);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
