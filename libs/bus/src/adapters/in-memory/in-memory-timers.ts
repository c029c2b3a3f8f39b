/** Timers of the in-memory bus, all cancelled by close() and never keeping the process alive. */
export class InMemoryTimers {
  private readonly pending = new Set<NodeJS.Timeout>();
  /** Set by clear(): the bus is closing, so nothing new is scheduled or dispatched. */
  stopped = false;

  after(delayMs: number, action: () => void): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.pending.delete(timer);
      action();
    }, delayMs);
    timer.unref();
    this.pending.add(timer);
  }

  clear(): void {
    this.stopped = true;
    for (const timer of this.pending) clearTimeout(timer);
    this.pending.clear();
  }
}
