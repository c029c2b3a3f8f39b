/** Chunk sets held between their chunks, each dropped once idle for `idleMs` (its sender gave up). */
export class ExpiringChunkSets<T> {
  private readonly entries = new Map<string, { value: T; timer: NodeJS.Timeout }>();

  constructor(private readonly idleMs: number) {}

  put(id: string, value: T): void {
    this.delete(id);
    this.entries.set(id, { value, timer: this.expiry(id) });
  }

  /** The set, its idle time restarted; undefined when unknown or expired. */
  touch(id: string): T | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    clearTimeout(entry.timer);
    entry.timer = this.expiry(id);
    return entry.value;
  }

  delete(id: string): void {
    const entry = this.entries.get(id);
    if (entry) clearTimeout(entry.timer);
    this.entries.delete(id);
  }

  clear(): void {
    for (const id of [...this.entries.keys()]) this.delete(id);
  }

  private expiry(id: string): NodeJS.Timeout {
    // unref: a forgotten set never keeps the process alive.
    return setTimeout(() => this.entries.delete(id), this.idleMs).unref();
  }
}
