import { sql } from 'kysely';
import type { Database } from '../adapters/postgres/open-database.js';

/** Leadership among relay instances: only the holder publishes. */
export interface LeaderLock {
  /** True when this instance now leads; false when another does. */
  tryAcquire(): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * PostgreSQL: a session advisory lock held on one pinned pool connection; the server drops it
 * when the process or its connection dies, so a standby takes over.
 */
export class SessionAdvisoryLock implements LeaderLock {
  private releaseHeld: (() => void) | undefined;
  private held: Promise<void> | undefined;

  constructor(
    private readonly database: Database,
    private readonly keys: readonly [number, number],
  ) {}

  tryAcquire(): Promise<boolean> {
    if (this.releaseHeld) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      const released = new Promise<void>((release) => (this.releaseHeld = release));
      this.held = this.database.db
        .connection()
        .execute(async (conn) => {
          const [key1, key2] = this.keys;
          const { rows } = await sql<{ ok: boolean }>`SELECT pg_try_advisory_lock(${key1}, ${key2}) AS ok`.execute(
            conn,
          );
          if (!rows[0]?.ok) {
            this.releaseHeld = undefined;
            resolve(false);
            return;
          }
          resolve(true);
          await released;
          await sql`SELECT pg_advisory_unlock(${key1}, ${key2})`.execute(conn);
        })
        .catch((error: unknown) => {
          this.releaseHeld = undefined;
          reject(error instanceof Error ? error : new Error(String(error)));
        });
    });
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
