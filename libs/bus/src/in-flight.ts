import { BagLettingGo } from '@weft/collections';

/**
 * Tracks running handlers so a subscription can stop only after they settle. In a BagLettingGo,
 * not a Set of promises: a Set's discarded hash tables would keep each handled request's promise,
 * and what it settled with, alive until the next full collection.
 */
export class InFlight {
  private readonly running = new BagLettingGo<Promise<unknown>>();

  get size(): number {
    return this.running.size;
  }

  track<T>(work: Promise<T>): Promise<T> {
    const key = this.running.add(work);
    const done = (): void => void this.running.delete(key);
    void work.then(done, done);
    return work;
  }

  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }
}
