/**
 * At most `limit` holders at once; the others wait in order. A waiter whose signal aborts leaves
 * the queue with the signal's reason, so a cancelled or timed-out node never holds a turn it no
 * longer wants (the browser's contexts, the mapping processes).
 */
export class AbortableSemaphore {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  /** Holders waiting for a turn. */
  get queued(): number {
    return this.waiting.length;
  }

  async acquire(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.held < this.limit) {
      this.held++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.held++;
        resolve();
      };
      const onAbort = (): void => {
        this.waiting.splice(this.waiting.indexOf(grant), 1);
        reject(signal.reason as Error);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    this.held--;
    this.waiting.shift()?.();
  }
}
