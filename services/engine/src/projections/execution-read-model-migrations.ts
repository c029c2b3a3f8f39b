import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** Tables of the engine's read models; applied with the event store's migration runner. */
export const ENGINE_MIGRATIONS_TABLE = 'engine_migrations';

export const engineMigrations: Migration[] = [
  {
    name: '0001-executions',
    async up(db) {
      await sql`
        CREATE TABLE engine_executions (
          id uuid PRIMARY KEY,
          process_id uuid NOT NULL,
          organization_id uuid NOT NULL,
          status text NOT NULL,
          started_at timestamptz NOT NULL,
          completed_at timestamptz,
          duration_ms integer,
          error_message text,
          triggered_by_user_id text,
          trigger_node_id text NOT NULL,
          attempt integer NOT NULL DEFAULT 1,
          failed_node_id text,
          failed_node_name text,
          input_data jsonb,
          output_data jsonb,
          graph_snapshot jsonb
        )`.execute(db);
      // History pages: newest first per process, optionally by status; stable order on ties.
      await sql`CREATE INDEX engine_executions_history ON engine_executions (process_id, started_at DESC, id DESC)`.execute(
        db,
      );
      await sql`CREATE INDEX engine_executions_history_status ON engine_executions (process_id, status, started_at DESC, id DESC)`.execute(
        db,
      );
      // Resume after a crash: the running ones.
      await sql`CREATE INDEX engine_executions_running ON engine_executions (started_at) WHERE status = 'running'`.execute(
        db,
      );
      await sql`
        CREATE TABLE engine_node_states (
          execution_id uuid NOT NULL,
          node_id text NOT NULL,
          position integer NOT NULL,
          node_name text NOT NULL,
          node_type text NOT NULL,
          status text NOT NULL,
          started_at timestamptz,
          completed_at timestamptz,
          duration_ms integer,
          input_data jsonb,
          output_data jsonb,
          error text,
          iterations integer,
          PRIMARY KEY (execution_id, node_id)
        )`.execute(db);
      // Totals per process and status, so a history page never counts a million rows.
      await sql`
        CREATE TABLE engine_execution_counts (
          process_id uuid NOT NULL,
          status text NOT NULL,
          count bigint NOT NULL,
          PRIMARY KEY (process_id, status)
        )`.execute(db);
    },
  },
  {
    // NodeStarted records its input as references, and large values live in blob storage: the
    // rows keep the references, and reads resolve them.
    name: '0002-input-and-value-references',
    async up(db) {
      await sql`ALTER TABLE engine_node_states ADD COLUMN input_from jsonb, ADD COLUMN output_ref jsonb`.execute(db);
      await sql`ALTER TABLE engine_executions ADD COLUMN input_ref jsonb, ADD COLUMN output_ref jsonb`.execute(db);
    },
  },
];
