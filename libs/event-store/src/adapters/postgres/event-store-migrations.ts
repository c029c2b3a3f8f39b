import { sql } from 'kysely';
import type { Migration } from './migrate.js';

export const EVENT_STORE_MIGRATIONS_TABLE = 'event_store_migrations';

/** The event store's own tables; the same SQL runs on PostgreSQL 15 and PGlite. */
export const eventStoreMigrations: readonly Migration[] = [
  {
    name: '0001-events',
    async up(db) {
      await sql`
        CREATE TABLE events (
          position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          stream_id text NOT NULL,
          stream_version integer NOT NULL,
          event_id uuid NOT NULL UNIQUE,
          type text NOT NULL,
          schema_version integer NOT NULL DEFAULT 1,
          data jsonb NOT NULL,
          metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
          recorded_at timestamptz NOT NULL DEFAULT now(),
          transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
          UNIQUE (stream_id, stream_version)
        )`.execute(db);
      // Type-filtered catch-up reads (subscriptions, projection rebuilds).
      await sql`CREATE INDEX events_type_position ON events (type, position)`.execute(db);
    },
  },
  {
    name: '0002-checkpoints',
    async up(db) {
      await sql`
        CREATE TABLE subscription_checkpoints (
          name text PRIMARY KEY,
          position bigint NOT NULL,
          updated_at timestamptz NOT NULL DEFAULT now()
        )`.execute(db);
      // Async projections store their checkpoint in the transaction that updates their tables.
      await sql`
        CREATE TABLE projection_checkpoints (
          name text PRIMARY KEY,
          position bigint NOT NULL,
          updated_at timestamptz NOT NULL DEFAULT now()
        )`.execute(db);
    },
  },
  {
    name: '0003-append-checks',
    async up(db) {
      // Raised by the append statement when a checked stream moved (append-statement.ts): failing
      // the statement itself rolls back everything the transaction wrote with it, also when its
      // COMMIT was already sent behind it.
      await sql`
        CREATE FUNCTION weft_wrong_expected_version(stream text, expected integer, actual integer)
        RETURNS integer LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'stream % is at version %, expected %', stream, actual, expected
            USING ERRCODE = 'WV409', DETAIL = json_build_object('s', stream, 'v', expected, 'a', actual)::text;
        END $$`.execute(db);
      // Raised by the append statement when what it relies on does not hold: the append lock of
      // its own transaction (a pipelined BEGIN that failed leaves the statement in autocommit),
      // or one inserted row per event.
      await sql`
        CREATE FUNCTION weft_append_refused(reason text)
        RETURNS integer LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'append refused: %', reason USING ERRCODE = '55000';
        END $$`.execute(db);
    },
  },
];
