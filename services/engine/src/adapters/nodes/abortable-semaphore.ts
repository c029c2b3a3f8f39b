import { FairQueue } from './fair-queue.js';

/**
 * At most `limit` holders at once; the others wait, in turn by owner (an organization: see
 * FairQueue) and in order within an owner. A waiter whose signal aborts leaves the queue with the
 * signal's reason, so a cancelled or timed-out node never holds a turn it no longer wants (the
 * browser's contexts, the mapping processes, the OCR decoders).
 */
export class AbortableSemaphore {
  private held = 0;
  private readonly waiting = new FairQueue<() => void>();

  constructor(private readonly limit: number) {}

  /** Whether anyone holds or waits for a turn. */
  get busy(): boolean {
    return this.held > 0 || this.waiting.size > 0;
  }

  /** Holders waiting for a turn. */
  get queued(): number {
    return this.waiting.size;
  }

  async acquire(signal: AbortSignal, owner: string): Promise<void> {
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
        this.waiting.remove(owner, grant);
        reject(signal.reason as Error);
      };
      this.waiting.push(owner, grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(): void {
    this.held--;
    this.waiting.shift()?.();
  }
}
