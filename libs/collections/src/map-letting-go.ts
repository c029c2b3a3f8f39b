/**
 * A Map for long-lived collections whose entries come and go with each request (runs in flight,
 * waiters, recently finished rows): a value removed from it, or replaced, is no longer reachable
 * through it, not even from the hash tables V8 has discarded.
 *
 * Why not a plain Map: when deletions fill a Map's (or Set's) hash table, V8 copies the live
 * entries into a new table and leaves the old one holding them, plus a pointer to its successor
 * (for iterators that were running). Once a table is in the old generation, which any full
 * collection makes of a live one, V8 allocates every later table there too, and young-generation
 * collections treat what those discarded tables point to as alive (they only see the old
 * generation's pointers, not whether the table itself is still used). So every value that was in
 * the Map when a table was replaced survives until the next full collection, and is promoted on
 * the way: at c=50 that was each request's run, state and rows (docs/performance.md, twenty-third
 * session). Here the tables hold only keys and small boxes whose value is cleared on removal.
 *
 * Keys are still kept by discarded tables until the next full collection: use strings or
 * numbers as keys, not objects that hold a request's data.
 */
export class MapLettingGo<K, V> implements Iterable<[K, V]> {
  readonly #boxes = new Map<K, { value: V | undefined }>();

  get size(): number {
    return this.#boxes.size;
  }

  has(key: K): boolean {
    return this.#boxes.has(key);
  }

  get(key: K): V | undefined {
    return this.#boxes.get(key)?.value;
  }

  set(key: K, value: V): this {
    const box = this.#boxes.get(key);
    if (box) box.value = value;
    else this.#boxes.set(key, { value });
    return this;
  }

  delete(key: K): boolean {
    const box = this.#boxes.get(key);
    if (!box) return false;
    this.#boxes.delete(key);
    box.value = undefined;
    return true;
  }

  clear(): void {
    for (const box of this.#boxes.values()) box.value = undefined;
    this.#boxes.clear();
  }

  /** The first key in insertion order (the oldest entry), or undefined when empty. */
  firstKey(): K | undefined {
    for (const key of this.#boxes.keys()) return key;
    return undefined;
  }

  keys(): IterableIterator<K> {
    return this.#boxes.keys();
  }

  *values(): IterableIterator<V> {
    for (const box of this.#boxes.values()) yield box.value as V;
  }

  *entries(): IterableIterator<[K, V]> {
    for (const [key, box] of this.#boxes) yield [key, box.value as V];
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}
