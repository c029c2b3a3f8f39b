import { BagLettingGo } from '@weft/collections';

/**
 * Wakes waiting catch-up loops when events were appended. The generation counter closes the
 * race between "read found nothing" and "start waiting": a wait that starts after an append it
 * has not yet seen returns at once. Waiters are kept in a BagLettingGo: a Set's
 * `clear()` at every append leaves its old hash table holding every waiter it had, alive for
 * young-generation collections until the next full one.
 */
export class AppendSignal {
  private generation = 0;
  private readonly waiters = new BagLettingGo<() => void>();

  get current(): number {
    return this.generation;
  }

  notify(): void {
    this.generation += 1;
    for (const wake of [...this.waiters.values()]) wake();
    this.waiters.clear();
  }

  /** Resolves on the next append after `seenGeneration`, on `interrupt`, or after `timeoutMs`. */
  wait(seenGeneration: number, timeoutMs: number, interrupt?: AbortSignal): Promise<void> {
    if (this.generation !== seenGeneration || interrupt?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(key);
        interrupt?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      const key = this.waiters.add(done);
      interrupt?.addEventListener('abort', done, { once: true });
    });
  }
}
