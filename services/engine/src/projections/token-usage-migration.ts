import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** What a node's language-model calls spent, shown in its node state (NodeCompleted `tokenUsage`). */
export const tokenUsageMigration: Migration = {
  name: '0010-node-token-usage',
  async up(db) {
    await sql`ALTER TABLE engine_node_states ADD COLUMN token_usage jsonb`.execute(db);
  },
};
