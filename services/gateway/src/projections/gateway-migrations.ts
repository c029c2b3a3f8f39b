import { sql } from 'kysely';
import type { Db } from '@weft/event-store';

/** Read-model tables of the gateway; rebuilt from organization and API key events. */
export const gatewayMigrations = [
  {
    name: 'gateway-001-organizations-and-api-keys',
    async up(db: Db): Promise<void> {
      await db.schema
        .createTable('gateway_organizations')
        .ifNotExists()
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_by_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('gateway_api_keys')
        .ifNotExists()
        .addColumn('id', 'uuid', (c) => c.primaryKey())
        .addColumn('organization_id', 'uuid', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('process_ids', 'jsonb')
        .addColumn('system', 'boolean', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await sql`CREATE INDEX IF NOT EXISTS gateway_api_keys_active_hash ON gateway_api_keys (key_hash) WHERE revoked_at IS NULL`.execute(
        db,
      );
      await sql`CREATE INDEX IF NOT EXISTS gateway_api_keys_by_org ON gateway_api_keys (organization_id, created_at)`.execute(
        db,
      );
    },
  },
];
