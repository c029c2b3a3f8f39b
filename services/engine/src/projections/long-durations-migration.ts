import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** Durations in milliseconds pass 2^31 after 24.8 days (a long wait, a long execution): bigint columns. */
export const longDurationsMigration: Migration = {
  name: '0006-long-durations',
  async up(db) {
    await sql`ALTER TABLE engine_executions ALTER COLUMN duration_ms TYPE bigint`.execute(db);
    await sql`ALTER TABLE engine_node_states ALTER COLUMN duration_ms TYPE bigint`.execute(db);
  },
};
