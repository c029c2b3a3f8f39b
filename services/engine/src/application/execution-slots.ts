import type { ConsumeGate } from '@weft/bus';

/**
 * The executions one engine runs at once (started, waiting in memory, resumed) against its
 * limit. The request consumer takes a slot before it pulls a request and holds it until the
 * request is acked; the execution launched from it takes its own, so for that moment it counts
 * twice: the engine may briefly run fewer than the limit, never more.
 */
export class ExecutionSlots implements ConsumeGate {
  private used = 0;
  private waiters: Array<() => void> = [];

  constructor(readonly limit = Number.POSITIVE_INFINITY) {}

  get inUse(): number {
    return this.used;
  }

  free(): number {
    return Math.max(0, this.limit - this.used);
  }

  get hasFree(): boolean {
    return this.used < this.limit;
  }

  /** A slot, or undefined at the limit. */
  tryTake(): (() => void) | undefined {
    return this.hasFree ? this.take() : undefined;
  }

  /** A slot even at the limit: for an execution whose request already holds one. Release is idempotent. */
  take(): () => void {
    this.used += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= 1;
      if (this.hasFree) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  whenFree(): Promise<void> {
    return this.hasFree ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
