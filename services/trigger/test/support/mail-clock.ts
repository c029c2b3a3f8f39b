import type { Clock } from '../../src/application/clock.js';

interface Sleeper {
  at: number;
  resolve: () => void;
}

/** A clock mail tests move by hand: listeners park in `sleepUntil`, the test sees each wait and wakes them. */
export class MailTestClock implements Clock {
  private sleepers: Sleeper[] = [];
  private parkedWaiters: { count: number; resolve: () => void }[] = [];
  /** Every wait asked for, as a delay from the time it was asked (ms). */
  readonly waits: number[] = [];

  constructor(private current: number) {}

  now(): Date {
    return new Date(this.current);
  }

  sleepUntil(at: Date, signal: AbortSignal): Promise<void> {
    this.waits.push(at.getTime() - this.current);
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const sleeper: Sleeper = { at: at.getTime(), resolve };
      sleeper.resolve = () => {
        this.sleepers = this.sleepers.filter((other) => other !== sleeper);
        resolve();
      };
      signal.addEventListener('abort', () => sleeper.resolve(), { once: true });
      this.sleepers.push(sleeper);
      this.notifyParked();
    });
  }

  /** Resolves once `count` listeners are parked in `sleepUntil` (their poll is over). */
  parked(count = 1): Promise<void> {
    return new Promise<void>((resolve) => {
      this.parkedWaiters.push({ count, resolve });
      this.notifyParked();
    });
  }

  /** How many listeners are parked now (a stopped listener parks no more). */
  get parkedCount(): number {
    return this.sleepers.length;
  }

  /** Moves time forward by `ms` and wakes every listener whose time has come. */
  advance(ms: number): void {
    this.current += ms;
    for (const sleeper of [...this.sleepers]) if (sleeper.at <= this.current) sleeper.resolve();
  }

  /** Moves time to the earliest wake and wakes those listeners; answers the step taken. */
  advanceToNextWake(): number {
    if (this.sleepers.length === 0) throw new Error('no listener is waiting on the clock');
    const step = Math.max(Math.min(...this.sleepers.map((sleeper) => sleeper.at)) - this.current, 0);
    this.advance(step);
    return step;
  }

  private notifyParked(): void {
    this.parkedWaiters = this.parkedWaiters.filter((waiter) => {
      if (this.sleepers.length < waiter.count) return true;
      waiter.resolve();
      return false;
    });
  }
}
