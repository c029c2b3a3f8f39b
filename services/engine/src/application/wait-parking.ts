import { sleepUntil } from './long-timer.js';

/**
 * Decides when a run may leave memory: every node still running is a wait (loop nodes, which only
 * wait for their bodies, are not counted) and the soonest of those waits, or the execution's
 * deadline, is at least `parkAfterMs` away. Checked a tick after a wait starts or a node
 * finishes, so that nodes started in the same tick are counted too.
 */
export interface WaitParkingOptions {
  parkAfterMs: number;
  now: () => Date;
  /** The execution's timeout: a parked run is woken by then at the latest. */
  deadline: Date;
  /** Nodes of the run that are running now, loop nodes excluded. */
  runningNodes: () => number;
  /** Called once, with the time to wake the run. */
  park: (dueAt: Date) => void;
}

export class WaitParking {
  private readonly sleepers = new Map<object, Date>();
  private checkQueued = false;
  private parked = false;

  constructor(private readonly options: WaitParkingOptions) {}

  /** A wait node's sleep: a timer, and a candidate for parking the whole run. */
  async sleep(at: Date, signal: AbortSignal): Promise<void> {
    const token = {};
    this.sleepers.set(token, at);
    this.queueCheck();
    try {
      await sleepUntil(at, this.options.now, signal);
    } finally {
      this.sleepers.delete(token);
    }
  }

  /** A node finished: the ones left may all be waits now. */
  nodeFinished(): void {
    if (this.sleepers.size > 0) this.queueCheck();
  }

  private queueCheck(): void {
    if (this.checkQueued) return;
    this.checkQueued = true;
    setImmediate(() => {
      this.checkQueued = false;
      this.check();
    });
  }

  private check(): void {
    if (this.parked || this.sleepers.size === 0 || this.sleepers.size < this.options.runningNodes()) return;
    let dueAt = this.options.deadline;
    for (const at of this.sleepers.values()) if (at < dueAt) dueAt = at;
    if (dueAt.getTime() - this.options.now().getTime() < this.options.parkAfterMs) return;
    this.parked = true;
    this.options.park(dueAt);
  }
}
