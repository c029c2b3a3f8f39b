import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/**
 * Graph snapshots stored once per distinct graph (graph-snapshot-ids.ts) instead of in every
 * execution row. Rows written before (or started by an engine of the previous version during an
 * upgrade) keep their inline `graph_snapshot` and no id; a row with an id reads its snapshot from
 * here (a row accepted before the upgrade and started after it has both, and the id wins).
 * Nothing deletes executions, so no snapshot is left without a row that names it.
 */
export const graphSnapshotsMigration: Migration = {
  name: '0012-graph-snapshots',
  async up(db) {
    await sql`CREATE TABLE engine_graph_snapshots (id text PRIMARY KEY, snapshot jsonb NOT NULL)`.execute(db);
    await sql`ALTER TABLE engine_executions ADD COLUMN graph_snapshot_id text`.execute(db);
  },
};
