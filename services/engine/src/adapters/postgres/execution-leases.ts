import { sql } from 'kysely';
import { streamKey, TERMINAL_EXECUTION_EVENTS } from '@weft/contracts';
import type { Db, Migration, StoredEvent, Trx } from '@weft/event-store';
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

const TERMINAL = new Set<string>(TERMINAL_EXECUTION_EVENTS);

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

  async renewAll(): Promise<void> {
    await sql`UPDATE engine_execution_leases SET expires_at = ${this.expiry()} WHERE owner = ${this.owner}`.execute(
      this.db,
    );
  }

  async release(executionId: string): Promise<void> {
    await sql`DELETE FROM engine_execution_leases WHERE execution_id = ${executionId} AND owner = ${this.owner}`.execute(
      this.db,
    );
  }

  async orphans(limit: number): Promise<string[]> {
    const result = await sql<{ id: string }>`
      SELECT e.id FROM engine_executions e
      LEFT JOIN engine_execution_leases l ON l.execution_id = e.id
      WHERE e.status = 'running' AND (l.execution_id IS NULL OR l.expires_at < now())
      ORDER BY e.started_at LIMIT ${limit}`.execute(this.db);
    return result.rows.map((row) => String(row.id));
  }
}

/**
 * Leases that follow the events, inside the commit that stores them: an ExecutionStarted takes
 * the lease for the engine that wrote it, a terminal event drops it. No extra round trips.
 */
export async function followExecutionEvents(
  trx: Trx,
  leases: { owner: string; leaseMs: number },
  stored: readonly StoredEvent[],
): Promise<void> {
  const started = stored.filter((event) => event.type === 'ExecutionStarted').map((event) => streamKey(event.streamId));
  const ended = stored.filter((event) => TERMINAL.has(event.type)).map((event) => streamKey(event.streamId));
  if (started.length > 0) {
    await trx
      .insertInto('engine_execution_leases')
      .values(
        started.map((id) => ({
          execution_id: id,
          owner: leases.owner,
          expires_at: sql`now() + make_interval(secs => ${leases.leaseMs / 1000})`,
        })),
      )
      .onConflict((oc) =>
        oc
          .column('execution_id')
          .doUpdateSet({ owner: sql.ref('excluded.owner'), expires_at: sql.ref('excluded.expires_at') }),
      )
      .execute();
  }
  if (ended.length > 0) await trx.deleteFrom('engine_execution_leases').where('execution_id', 'in', ended).execute();
}
