import { sql, type RawBuilder } from 'kysely';
import { streamKey, TERMINAL_EXECUTION_EVENTS } from '@weft/contracts';
import type { Db, Migration, StoredEvent } from '@weft/event-store';
import type { ExecutionLeases } from '../../application/engine-ports.js';

/**
 * Execution leases in PostgreSQL, timed by the database clock so engines with skewed clocks agree.
 * A lease is operational state, not history: it is not event-sourced.
 */
export const executionLeaseMigration: Migration = {
  name: '0002-execution-leases',
  async up(db) {
    await sql`
      CREATE TABLE engine_execution_leases (
        execution_id uuid PRIMARY KEY,
        owner text NOT NULL,
        expires_at timestamptz NOT NULL
      )`.execute(db);
    await sql`CREATE INDEX engine_execution_leases_owner ON engine_execution_leases (owner)`.execute(db);
  },
};

const RELEASING = new Set<string>([...TERMINAL_EXECUTION_EVENTS, 'ExecutionParked']);

export class PostgresExecutionLeases implements ExecutionLeases {
  constructor(
    private readonly db: Db,
    readonly owner: string,
    readonly leaseMs: number,
  ) {}

  private expiry() {
    return sql`now() + make_interval(secs => ${this.leaseMs / 1000})`;
  }

  async claimNew(executionId: string): Promise<boolean> {
    const result = await sql`
      INSERT INTO engine_execution_leases (execution_id, owner, expires_at)
      VALUES (${executionId}, ${this.owner}, ${this.expiry()})
      ON CONFLICT (execution_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
      WHERE engine_execution_leases.owner = ${this.owner} OR engine_execution_leases.expires_at < now()
      RETURNING execution_id`.execute(this.db);
    return result.rows.length === 1;
  }

  claimLapsed(executionId: string): Promise<boolean> {
    return this.claimNew(executionId);
  }

  async renew(executionIds: readonly string[]): Promise<string[]> {
    if (executionIds.length === 0) return [];
    // Only the executions still running here; a lease row left behind by a failed resume lapses.
    const result = await sql<{ execution_id: string }>`
      UPDATE engine_execution_leases SET expires_at = ${this.expiry()}
      WHERE owner = ${this.owner}
        AND execution_id IN (SELECT id::uuid FROM json_array_elements_text(${JSON.stringify(executionIds)}::json) AS ids(id))
      RETURNING execution_id`.execute(this.db);
    return result.rows.map((row) => String(row.execution_id));
  }

  async release(executionId: string): Promise<void> {
    await sql`DELETE FROM engine_execution_leases WHERE execution_id = ${executionId} AND owner = ${this.owner}`.execute(
      this.db,
    );
  }

  async claimOrphans(limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    // Engines claiming at once each get a disjoint share: a row another just took is no longer lapsed.
    const result = await sql<{ execution_id: string }>`
      INSERT INTO engine_execution_leases (execution_id, owner, expires_at)
      SELECT e.id, ${this.owner}, ${this.expiry()} FROM engine_executions e
      LEFT JOIN engine_execution_leases l ON l.execution_id = e.id
      WHERE e.status = 'running' AND NOT e.queued AND (l.execution_id IS NULL OR l.expires_at < now())
        AND NOT EXISTS (SELECT 1 FROM engine_parked_waits p WHERE p.execution_id = e.id)
      ORDER BY e.started_at LIMIT ${limit}
      ON CONFLICT (execution_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
      WHERE engine_execution_leases.expires_at < now()
      RETURNING execution_id`.execute(this.db);
    return result.rows.map((row) => String(row.execution_id));
  }
}

/**
 * Leases that follow the events, inside the commit that stores them: an ExecutionStarted takes
 * the lease for the engine that wrote it, a terminal event drops it, and so does parking (a
 * parked execution runs nowhere; the engine that wakes it claims a new lease). Returned as statements to
 * send with the read model's (no extra round trips); they touch disjoint rows, so an execution
 * that starts and ends in the same batch takes no lease at all, as insert-then-delete would.
 */
export function leaseWritesFor(
  leases: { owner: string; leaseMs: number },
  stored: readonly StoredEvent[],
): RawBuilder<unknown>[] {
  const ended = new Set(stored.filter((event) => RELEASING.has(event.type)).map((event) => streamKey(event.streamId)));
  const started = stored
    .filter((event) => event.type === 'ExecutionStarted')
    .map((event) => streamKey(event.streamId))
    .filter((id) => !ended.has(id));
  const writes: RawBuilder<unknown>[] = [];
  if (started.length > 0) {
    // One parameter for all of them, whatever the batch size.
    writes.push(sql`
      INSERT INTO engine_execution_leases (execution_id, owner, expires_at)
      SELECT id::uuid, ${leases.owner}, now() + make_interval(secs => ${leases.leaseMs / 1000})
      FROM json_array_elements_text(${JSON.stringify(started)}::json) AS ids(id)
      ON CONFLICT (execution_id) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at`);
  }
  if (ended.size > 0) {
    writes.push(sql`
      DELETE FROM engine_execution_leases
      WHERE execution_id IN (SELECT id::uuid FROM json_array_elements_text(${JSON.stringify([...ended])}::json) AS ids(id))`);
  }
  return writes;
}
