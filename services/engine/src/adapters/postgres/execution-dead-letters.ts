import { sql } from 'kysely';
import type { ExecutionRequest } from '@weft/contracts';
import type { Db, Migration } from '@weft/event-store';
import type { DeadLetteredRequest, ExecutionDeadLetters } from '../../application/undeliverable-requests.js';

/** Execution requests that failed every delivery and whose process could not be loaded (docs/engine.md: replay). */
export const executionDeadLetterMigration: Migration = {
  name: '0007-execution-dead-letters',
  async up(db) {
    await sql`
      CREATE TABLE engine_execution_dead_letters (
        execution_id text PRIMARY KEY,
        organization_id text NOT NULL,
        process_id text NOT NULL,
        request jsonb NOT NULL,
        error text NOT NULL,
        delivery_count integer NOT NULL,
        dead_lettered_at timestamptz NOT NULL DEFAULT now()
      )`.execute(db);
  },
};

export class PostgresExecutionDeadLetters implements ExecutionDeadLetters {
  constructor(private readonly db: Db) {}

  async add(entry: DeadLetteredRequest): Promise<void> {
    const { request } = entry;
    // A second dead letter of the same request (redelivered after a crash) keeps the latest cause.
    await sql`
      INSERT INTO engine_execution_dead_letters (execution_id, organization_id, process_id, request, error, delivery_count)
      VALUES (${request.executionId}, ${request.organizationId}, ${request.processId},
              ${JSON.stringify(request)}::jsonb, ${entry.error}, ${entry.deliveryCount})
      ON CONFLICT (execution_id) DO UPDATE SET error = excluded.error, delivery_count = excluded.delivery_count,
        dead_lettered_at = excluded.dead_lettered_at`.execute(this.db);
  }

  async list(limit = 100): Promise<DeadLetteredRequest[]> {
    const { rows } = await sql<{ request: ExecutionRequest; error: string; delivery_count: number }>`
      SELECT request, error, delivery_count FROM engine_execution_dead_letters
      ORDER BY dead_lettered_at LIMIT ${limit}`.execute(this.db);
    return rows.map((row) => ({ request: row.request, error: row.error, deliveryCount: row.delivery_count }));
  }

  /** Re-enqueues a dead letter (same execution id, so a replay runs it at most once) and forgets it. */
  async replay(executionId: string, enqueue: (request: ExecutionRequest) => Promise<void>): Promise<boolean> {
    const { rows } = await sql<{ request: ExecutionRequest }>`
      SELECT request FROM engine_execution_dead_letters WHERE execution_id = ${executionId}`.execute(this.db);
    const request = rows[0]?.request;
    if (!request) return false;
    await enqueue(request);
    await sql`DELETE FROM engine_execution_dead_letters WHERE execution_id = ${executionId}`.execute(this.db);
    return true;
  }
}
