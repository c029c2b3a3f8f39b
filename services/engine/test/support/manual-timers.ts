import type { SandboxTimer, SandboxTimers } from '../../src/adapters/nodes/script-sandbox.js';

/** Timers that fire only when the test moves the clock, in time order: races become a chosen order. */
export class ManualTimers implements SandboxTimers {
  private clock = 0;
  private readonly pending = new Set<{ at: number; callback: () => void; timer: SandboxTimer }>();

  now(): number {
    return this.clock;
  }

  setTimeout(callback: () => void, ms: number): SandboxTimer {
    const timer: SandboxTimer = { unref: () => timer };
    this.pending.add({ at: this.clock + ms, callback, timer });
    return timer;
  }

  clearTimeout(timer: SandboxTimer): void {
    for (const entry of this.pending) if (entry.timer === timer) this.pending.delete(entry);
  }

  /** Moves the clock `ms` on, firing each timer due by then at its time (ones they set too, when due). */
  advance(ms: number): void {
    const target = this.clock + ms;
    for (;;) {
      const next = [...this.pending].filter((entry) => entry.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.pending.delete(next);
      this.clock = next.at;
      next.callback();
    }
    this.clock = target;
  }
}
