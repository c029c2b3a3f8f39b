import { sql, type RawBuilder } from 'kysely';
import type { Db, Migration, StoredEvent } from '@weft/event-store';
import { streamKey } from '@weft/contracts';
import type { ErrorWebhookQueue } from '../../application/engine-ports.js';

/**
 * Error-webhook deliveries still to make: one row per failed execution with a webhook, written in
 * the commit of its terminal event (`ErrorWebhookDeliveryScheduled`), moved on or removed by the
 * commit of each attempt. An engine claims a row for one attempt (`claimed_until`, database clock)
 * so a delivery whose engine died is picked up again once the claim lapses.
 */
export const errorWebhookQueueMigration: Migration = {
  name: '0004-error-webhook-queue',
  async up(db) {
    await sql`
      CREATE TABLE engine_error_webhook_queue (
        execution_id uuid PRIMARY KEY,
        next_attempt_at timestamptz NOT NULL,
        claimed_until timestamptz
      )`.execute(db);
    await sql`CREATE INDEX engine_error_webhook_queue_due ON engine_error_webhook_queue (next_attempt_at)`.execute(db);
  },
};

export class PostgresErrorWebhookQueue implements ErrorWebhookQueue {
  constructor(private readonly db: Db) {}

  async claimDue(now: Date, limit: number, claimMs: number): Promise<string[]> {
    const result = await sql<{ execution_id: string }>`
      UPDATE engine_error_webhook_queue SET claimed_until = now() + make_interval(secs => ${claimMs / 1000})
      WHERE execution_id IN (
        SELECT execution_id FROM engine_error_webhook_queue
        WHERE next_attempt_at <= ${now} AND (claimed_until IS NULL OR claimed_until < now())
        ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING execution_id`.execute(this.db);
    return result.rows.map((row) => String(row.execution_id));
  }

  async drop(executionId: string): Promise<void> {
    await sql`DELETE FROM engine_error_webhook_queue WHERE execution_id = ${executionId}`.execute(this.db);
  }
}

/** The queue rows that follow a commit's scheduling and attempt events. */
export function errorWebhookQueueWritesFor(stored: readonly StoredEvent[]): RawBuilder<unknown>[] {
  const scheduled: { execution_id: string; next_attempt_at: string }[] = [];
  const retrying: { execution_id: string; next_attempt_at: string }[] = [];
  const done: string[] = [];
  for (const event of stored) {
    const id = streamKey(event.streamId);
    if (event.type === 'ErrorWebhookDeliveryScheduled') {
      scheduled.push({ execution_id: id, next_attempt_at: (event.data as { scheduledAt: string }).scheduledAt });
    } else if (event.type === 'ErrorWebhookDeliveryAttempted') {
      const data = event.data as { outcome: string; nextAttemptAt: string | null };
      if (data.outcome === 'retrying' && data.nextAttemptAt)
        retrying.push({ execution_id: id, next_attempt_at: data.nextAttemptAt });
      else done.push(id);
    }
  }
  const writes: RawBuilder<unknown>[] = [];
  // Scheduling and its attempts are never in one commit (an attempt needs the committed row).
  const upserts = [...scheduled, ...retrying];
  if (upserts.length > 0) {
    writes.push(sql`
      INSERT INTO engine_error_webhook_queue (execution_id, next_attempt_at)
      SELECT execution_id, next_attempt_at FROM json_to_recordset(${JSON.stringify(upserts)}::json)
        AS r(execution_id uuid, next_attempt_at timestamptz)
      ON CONFLICT (execution_id) DO UPDATE SET next_attempt_at = excluded.next_attempt_at, claimed_until = NULL`);
  }
  if (done.length > 0) {
    writes.push(sql`
      DELETE FROM engine_error_webhook_queue
      WHERE execution_id IN (SELECT id::uuid FROM json_array_elements_text(${JSON.stringify(done)}::json) AS ids(id))`);
  }
  return writes;
}
