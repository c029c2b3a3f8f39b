import { MapLettingGo } from './map-letting-go.js';

/**
 * A set of values that come and go with each request (handlers in flight, waiters), each added
 * under a number of its own, which removes it; one value added twice is in it twice. A
 * MapLettingGo underneath, for the reason a Set would not do (map-letting-go.ts): its discarded
 * hash tables would keep every value it held alive until the next full collection.
 */
export class BagLettingGo<V> {
  readonly #entries = new MapLettingGo<number, V>();
  #nextKey = 0;

  get size(): number {
    return this.#entries.size;
  }

  /** Adds `value`; returns the key that removes it. */
  add(value: V): number {
    const key = this.#nextKey++;
    this.#entries.set(key, value);
    return key;
  }

  delete(key: number): boolean {
    return this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }

  values(): IterableIterator<V> {
    return this.#entries.values();
  }
}
