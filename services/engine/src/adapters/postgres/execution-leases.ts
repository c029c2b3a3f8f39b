import { sql } from 'kysely';
import type { Db, Migration } from '@weft/event-store';
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

export class PostgresExecutionLeases implements ExecutionLeases {
  constructor(
    private readonly db: Db,
    readonly owner: string,
    private readonly leaseMs: number,
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
    await sql`UPDATE engine_execution_leases SET expires_at = ${this.expiry()} WHERE owner = ${this.owner}`.execute(this.db);
  }

  async release(executionId: string): Promise<void> {
    await sql`DELETE FROM engine_execution_leases WHERE execution_id = ${executionId} AND owner = ${this.owner}`.execute(this.db);
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
