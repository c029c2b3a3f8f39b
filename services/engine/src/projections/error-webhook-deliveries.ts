import { sql, type RawBuilder } from 'kysely';
import type { Migration, StoredEvent } from '@weft/event-store';
import type { ErrorWebhookDelivery } from '@weft/contracts';

/**
 * Read model of error-webhook delivery attempts: one row per `ErrorWebhookDeliveryAttempted`,
 * shown as the execution record's `error_webhook_deliveries`. Rebuilt from the events like the
 * other execution tables.
 */
export const errorWebhookDeliveriesMigration: Migration = {
  name: '0005-error-webhook-deliveries',
  async up(db) {
    await sql`
      CREATE TABLE engine_error_webhook_deliveries (
        execution_id uuid NOT NULL,
        attempt integer NOT NULL,
        outcome text NOT NULL,
        http_status integer,
        error text,
        attempted_at timestamptz NOT NULL,
        next_attempt_at timestamptz,
        PRIMARY KEY (execution_id, attempt)
      )`.execute(db);
  },
};

interface AttemptData {
  executionId: string;
  attempt: number;
  outcome: string;
  httpStatus: number | null;
  error: string | null;
  attemptedAt: string;
  nextAttemptAt: string | null;
}

/** One insert for every attempt of a commit (none when it has no attempt). */
export function errorWebhookDeliveryWrites(stored: readonly StoredEvent[]): RawBuilder<unknown>[] {
  const rows = stored
    .filter((event) => event.type === 'ErrorWebhookDeliveryAttempted')
    .map((event) => {
      const d = event.data as AttemptData;
      return {
        execution_id: d.executionId,
        attempt: d.attempt,
        outcome: d.outcome,
        http_status: d.httpStatus,
        error: d.error,
        attempted_at: d.attemptedAt,
        next_attempt_at: d.nextAttemptAt,
      };
    });
  if (rows.length === 0) return [];
  return [
    sql`INSERT INTO engine_error_webhook_deliveries
        (execution_id, attempt, outcome, http_status, error, attempted_at, next_attempt_at)
      SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(execution_id uuid, attempt integer,
        outcome text, http_status integer, error text, attempted_at timestamptz, next_attempt_at timestamptz)
      ON CONFLICT (execution_id, attempt) DO NOTHING`,
  ];
}

export const resetErrorWebhookDeliveries = sql`DELETE FROM engine_error_webhook_deliveries`;

/** SQL of a JSON array of an execution's attempts (the record's `error_webhook_deliveries`). */
export const deliveriesOfExecution = (executionId: RawBuilder<unknown>): RawBuilder<unknown> => sql`(
  SELECT coalesce(jsonb_agg(jsonb_build_object(
    'attempt', d.attempt, 'outcome', d.outcome, 'http_status', d.http_status, 'error', d.error,
    'attempted_at', d.attempted_at, 'next_attempt_at', d.next_attempt_at) ORDER BY d.attempt), '[]'::jsonb)
  FROM engine_error_webhook_deliveries d WHERE d.execution_id = ${executionId})`;

/** Timestamps in the aggregated JSON carry the server's offset: normalized to ISO UTC. */
export const toDeliveries = (value: unknown): ErrorWebhookDelivery[] =>
  ((value ?? []) as ErrorWebhookDelivery[]).map((delivery) => ({
    ...delivery,
    attempted_at: new Date(delivery.attempted_at).toISOString(),
    next_attempt_at: delivery.next_attempt_at === null ? null : new Date(delivery.next_attempt_at).toISOString(),
  }));
