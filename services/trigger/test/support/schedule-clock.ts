import type { Clock } from '../../src/application/clock.js';

/** A clock tests move by hand: sleepers wake when it passes their time; tests wait until listeners sleep again. */
export class ScheduleClock implements Clock {
  private current: number;
  private sleepers: { at: number; wake: () => void }[] = [];
  private watchers: { count: number; done: () => void }[] = [];

  constructor(start: string) {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  sleepUntil(at: Date, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted || at.getTime() <= this.current) return resolve();
      const sleeper = {
        at: at.getTime(),
        wake: () => {
          this.sleepers = this.sleepers.filter((candidate) => candidate !== sleeper);
          resolve();
        },
      };
      signal.addEventListener('abort', () => sleeper.wake(), { once: true });
      this.sleepers.push(sleeper);
      this.notify();
    });
  }

  /** Moves to `time` and wakes every sleeper due by then. */
  set(time: string): void {
    this.current = new Date(time).getTime();
    for (const sleeper of [...this.sleepers]) if (sleeper.at <= this.current) sleeper.wake();
  }

  /** Resolves once `count` listeners sleep again (they handled what woke them). */
  sleeping(count: number): Promise<void> {
    return new Promise((done) => {
      this.watchers.push({ count, done });
      this.notify();
    });
  }

  private notify(): void {
    const ready = this.watchers.filter((watcher) => this.sleepers.length >= watcher.count);
    this.watchers = this.watchers.filter((watcher) => !ready.includes(watcher));
    for (const watcher of ready) watcher.done();
  }
}
