import { sql, type RawBuilder } from 'kysely';
import type { Db, Migration, StoredEvent } from '@weft/event-store';
import { streamKey } from '@weft/contracts';
import type { DueWait, ParkedWaits } from '../../application/engine-ports.js';

/**
 * Executions parked in a long wait: not in any engine's memory, no lease, one row with the time
 * they are due. Engines scan the rows due soon and resume them then. Operational state written
 * in the commit of the events that park and unpark them (`parkWritesFor`).
 */
export const parkedWaitsMigration: Migration = {
  name: '0003-parked-waits',
  async up(db) {
    await sql`
      CREATE TABLE engine_parked_waits (
        execution_id uuid PRIMARY KEY,
        due_at timestamptz NOT NULL
      )`.execute(db);
    await sql`CREATE INDEX engine_parked_waits_due ON engine_parked_waits (due_at)`.execute(db);
  },
};

export class PostgresParkedWaits implements ParkedWaits {
  constructor(private readonly db: Db) {}

  async dueBefore(before: Date, limit: number): Promise<DueWait[]> {
    const rows = await this.db
      .selectFrom('engine_parked_waits')
      .select(['execution_id', 'due_at'])
      .where('due_at', '<=', before)
      .orderBy('due_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ executionId: String(row.execution_id), dueAt: new Date(row.due_at as string) }));
  }

  async isDue(executionId: string, now: Date): Promise<boolean> {
    const row = await this.db
      .selectFrom('engine_parked_waits')
      .select('execution_id')
      .where('execution_id', '=', executionId)
      .where('due_at', '<=', now)
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** Parking writes the due row; the resume that wakes it, or a cancel, removes it. */
export function parkWritesFor(stored: readonly StoredEvent[]): RawBuilder<unknown>[] {
  const parked = new Map<string, string>();
  const unparked = new Set<string>();
  for (const event of stored) {
    const id = streamKey(event.streamId);
    if (event.type === 'ExecutionParked') {
      parked.set(id, (event.data as { dueAt: string }).dueAt);
      unparked.delete(id);
    } else if (event.type === 'ExecutionResumed' || event.type === 'ExecutionCancelled') {
      parked.delete(id);
      unparked.add(id);
    }
  }
  const writes: RawBuilder<unknown>[] = [];
  if (parked.size > 0) {
    const rows = [...parked].map(([execution_id, due_at]) => ({ execution_id, due_at }));
    writes.push(sql`
      INSERT INTO engine_parked_waits (execution_id, due_at)
      SELECT execution_id, due_at FROM json_to_recordset(${JSON.stringify(rows)}::json)
        AS r(execution_id uuid, due_at timestamptz)
      ON CONFLICT (execution_id) DO UPDATE SET due_at = excluded.due_at`);
  }
  if (unparked.size > 0) {
    writes.push(sql`
      DELETE FROM engine_parked_waits
      WHERE execution_id IN (SELECT id::uuid FROM json_array_elements_text(${JSON.stringify([...unparked])}::json) AS ids(id))`);
  }
  return writes;
}
