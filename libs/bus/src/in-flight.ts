import { MapLettingGo } from '@weft/collections';

/**
 * Tracks running handlers so a subscription can stop only after they settle. By number in a
 * MapLettingGo, not in a Set of promises: a Set's discarded hash tables would keep each handled
 * request's promise, and what it settled with, alive until the next full collection.
 */
export class InFlight {
  private readonly running = new MapLettingGo<number, Promise<unknown>>();
  private nextId = 0;

  get size(): number {
    return this.running.size;
  }

  track<T>(work: Promise<T>): Promise<T> {
    const id = this.nextId++;
    this.running.set(id, work);
    const done = (): void => void this.running.delete(id);
    void work.then(done, done);
    return work;
  }

  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }
}
