import { sql } from 'kysely';
import type { Migration } from '@weft/event-store';

/** The testing read models; ids and times stay text so a rebuild reproduces them byte for byte. */
export const TESTING_MIGRATIONS_TABLE = 'testing_migrations';

export const testingMigrations: Migration[] = [
  {
    name: '001_test_cases_runs_batches',
    async up(db) {
      await sql`
        CREATE TABLE testing_test_cases (
          id text PRIMARY KEY,
          process_id text NOT NULL,
          organization_id text NOT NULL,
          name text NOT NULL,
          tags jsonb NOT NULL,
          disabled boolean NOT NULL,
          document jsonb NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX testing_test_cases_by_process ON testing_test_cases (process_id, name, id)`.execute(db);
      await sql`
        CREATE TABLE testing_test_runs (
          id text PRIMARY KEY,
          test_case_id text NOT NULL,
          process_id text NOT NULL,
          organization_id text NOT NULL,
          batch_id text,
          status text NOT NULL,
          started_at text NOT NULL,
          duration_ms bigint,
          document jsonb NOT NULL
        )`.execute(db);
      await sql`CREATE INDEX testing_test_runs_by_org ON testing_test_runs (organization_id, started_at DESC, id)`.execute(
        db,
      );
      await sql`CREATE INDEX testing_test_runs_by_process ON testing_test_runs (process_id, started_at DESC, id)`.execute(
        db,
      );
      await sql`CREATE INDEX testing_test_runs_by_batch ON testing_test_runs (batch_id)`.execute(db);
      await sql`
        CREATE TABLE testing_batches (
          id text PRIMARY KEY,
          process_id text NOT NULL,
          organization_id text NOT NULL,
          status text NOT NULL,
          document jsonb NOT NULL
        )`.execute(db);
    },
  },
];
