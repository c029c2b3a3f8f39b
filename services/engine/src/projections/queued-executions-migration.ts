import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** An accepted execution is readable (and cancellable) before an engine takes it from the work queue. */
export const queuedExecutionsMigration: Migration = {
  name: '0008-queued-executions',
  async up(db) {
    await sql`ALTER TABLE engine_executions ADD COLUMN queued boolean NOT NULL DEFAULT false`.execute(db);
  },
};
