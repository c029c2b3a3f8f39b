import type { Database } from '../adapters/postgres/open-database.js';

/** Leadership among relay instances: only the holder publishes. */
export interface LeaderLock {
  /** True when this instance leads (now or already); false when another does. */
  tryAcquire(): Promise<boolean>;
  /** False once the lock was released or lost (e.g. its connection died). */
  isHeld(): boolean;
  release(): Promise<void>;
}

const HEARTBEAT_MS = 1_000;

/**
 * PostgreSQL: a session advisory lock held on one pinned pool connection; the server drops it
 * when the process or its connection dies, so a standby takes over. A heartbeat on the pinned
 * connection notices a dead or hung connection (each statement has the session timeout), closes
 * it, and so the old leader stops publishing.
 */
export class SessionAdvisoryLock implements LeaderLock {
  private releaseHeld: (() => void) | undefined;
  private held: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly keys: readonly [number, number],
    private readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  isHeld(): boolean {
    return this.releaseHeld !== undefined;
  }

  async tryAcquire(): Promise<boolean> {
    if (this.releaseHeld) return true;
    await this.held; // a lost holder's connection goes back to the pool (or is closed) first
    if (!this.database.pinSession) throw new Error('a session advisory lock needs PostgreSQL');
    const session = await this.database.pinSession();
    const [key1, key2] = this.keys;
    let rows: Array<{ ok: boolean }>;
    try {
      rows = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [key1, key2]);
    } catch (error) {
      session.release(true);
      throw error;
    }
    if (!rows[0]?.ok) {
      session.release();
      return false;
    }
    // Held only from here: an attempt that loses must never look like leadership.
    let releasedFlag = false;
    let wake: () => void = () => undefined;
    const released = new Promise<void>((resolveReleased) => {
      wake = resolveReleased;
    });
    this.releaseHeld = () => {
      releasedFlag = true;
      wake();
    };
    this.held = (async () => {
      try {
        while (!releasedFlag) {
          await Promise.race([released, new Promise((tick) => setTimeout(tick, this.heartbeatMs))]);
          if (!releasedFlag) await session.query('SELECT 1');
        }
        await session.query('SELECT pg_advisory_unlock($1, $2)', [key1, key2]);
        session.release();
      } catch {
        // Dead or hung: closing the connection makes the server drop the lock, for a standby to take.
        this.releaseHeld = undefined;
        session.release(true);
      }
    })();
    return true;
  }

  async release(): Promise<void> {
    const release = this.releaseHeld;
    this.releaseHeld = undefined;
    release?.();
    await this.held;
  }
}

const inProcessHolders = new WeakMap<object, Set<string>>();

/** PGlite: one process owns the database, so leadership is a flag shared in this process. */
export class InProcessLock implements LeaderLock {
  private holding = false;

  constructor(
    private readonly scope: object,
    private readonly name: string,
  ) {}

  isHeld(): boolean {
    return this.holding;
  }

  async tryAcquire(): Promise<boolean> {
    if (this.holding) return true;
    const holders = inProcessHolders.get(this.scope) ?? new Set<string>();
    inProcessHolders.set(this.scope, holders);
    if (holders.has(this.name)) return false;
    holders.add(this.name);
    this.holding = true;
    return true;
  }

  async release(): Promise<void> {
    if (!this.holding) return;
    this.holding = false;
    inProcessHolders.get(this.scope)?.delete(this.name);
  }
}
