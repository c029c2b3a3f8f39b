import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** The catalog's read-model tables; ids and times stay text so a rebuild reproduces them byte for byte. */
export const CATALOG_MIGRATIONS_TABLE = 'catalog_migrations';

export const catalogMigrations: Migration[] = [
  {
    name: '001_processes_and_versions',
    async up(db) {
      await sql`
        CREATE TABLE catalog_processes (
          id text PRIMARY KEY,
          organization_id text NOT NULL,
          name text NOT NULL,
          revision integer NOT NULL,
          state jsonb NOT NULL,
          created_at text NOT NULL,
          updated_at text NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX catalog_processes_by_org ON catalog_processes (organization_id, name, id)`.execute(db);
      await sql`
        CREATE TABLE catalog_process_versions (
          id text PRIMARY KEY,
          process_id text NOT NULL,
          organization_id text NOT NULL,
          version_number integer NOT NULL,
          label text NOT NULL,
          snapshot jsonb NOT NULL,
          created_by text NOT NULL,
          created_by_id text NOT NULL,
          created_at text NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX catalog_process_versions_by_process ON catalog_process_versions (process_id, version_number)`.execute(
        db,
      );
      // Filled by the collections projection; created here so the process list can filter on it.
      await sql`
        CREATE TABLE catalog_process_collection_members (
          collection_id text NOT NULL,
          process_id text NOT NULL,
          PRIMARY KEY (collection_id, process_id)
        )`.execute(db);
      await sql`CREATE INDEX catalog_process_collection_members_by_process ON catalog_process_collection_members (process_id)`.execute(
        db,
      );
    },
  },
  {
    name: '002_connections',
    async up(db) {
      await sql`
        CREATE TABLE catalog_connections (
          id text PRIMARY KEY,
          organization_id text NOT NULL,
          type text NOT NULL,
          name text NOT NULL,
          sealed_data jsonb NOT NULL,
          created_by text NOT NULL,
          created_by_id text NOT NULL,
          created_at text NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX catalog_connections_by_org ON catalog_connections (organization_id, name, id)`.execute(db);
    },
  },
  {
    name: '003_schemas_and_collections',
    async up(db) {
      await sql`
        CREATE TABLE catalog_schemas (
          id text PRIMARY KEY,
          organization_id text NOT NULL,
          name text NOT NULL,
          revision integer NOT NULL,
          state jsonb NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX catalog_schemas_by_org ON catalog_schemas (organization_id, name, id)`.execute(db);
      await sql`
        CREATE TABLE catalog_collections (
          id text PRIMARY KEY,
          kind text NOT NULL,
          organization_id text NOT NULL,
          parent_collection_id text,
          name text NOT NULL,
          revision integer NOT NULL,
          state jsonb NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX catalog_collections_by_org ON catalog_collections (organization_id, kind, name, id)`.execute(
        db,
      );
      await sql`
        CREATE TABLE catalog_schema_collection_members (
          collection_id text NOT NULL,
          schema_id text NOT NULL,
          PRIMARY KEY (collection_id, schema_id)
        )`.execute(db);
      await sql`CREATE INDEX catalog_schema_collection_members_by_schema ON catalog_schema_collection_members (schema_id)`.execute(
        db,
      );
    },
  },
  {
    // When a collection was last read: written by reads, not by events (docs/decisions/0004).
    name: '004_collection_views',
    async up(db) {
      await sql`
        CREATE TABLE catalog_collection_views (
          collection_id text PRIMARY KEY,
          viewed_at text NOT NULL
        )`.execute(db);
    },
  },
  {
    // Mail OAuth consents in flight: server-side state and PKCE verifier, never events (they expire).
    name: '005_oauth_consents',
    async up(db) {
      await sql`
        CREATE TABLE catalog_oauth_consents (
          state_hash text PRIMARY KEY,
          organization_id text NOT NULL,
          connection_id text NOT NULL,
          provider text NOT NULL,
          redirect_uri text NOT NULL,
          sealed_verifier jsonb NOT NULL,
          expires_at text NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX catalog_oauth_consents_by_org ON catalog_oauth_consents (organization_id, expires_at)`.execute(
        db,
      );
    },
  },
];
