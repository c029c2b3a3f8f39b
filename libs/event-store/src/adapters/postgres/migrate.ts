import { sql } from 'kysely';
import type { Db, Trx } from '../../event-store.js';

/** One schema change; `name` orders and identifies it, so never rename or edit a shipped one. */
export interface Migration {
  name: string;
  up(db: Trx): Promise<void>;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Applies the migrations not yet recorded in `table`, in array order, in one transaction.
 * Any service may use it for its own read-model tables with its own `table`.
 * Returns the names applied now.
 */
export async function migrate(db: Db, migrations: readonly Migration[], table: string): Promise<string[]> {
  if (!TABLE_NAME.test(table)) throw new Error(`invalid migration table name "${table}"`);
  const names = new Set<string>();
  for (const migration of migrations) {
    if (names.has(migration.name)) throw new Error(`duplicate migration name "${migration.name}"`);
    names.add(migration.name);
  }
  return db.transaction().execute(async (trx) => {
    // Exempt from the pool's timeouts: a migration may rewrite a large table or wait for another replica's.
    await sql`SET LOCAL statement_timeout = 0`.execute(trx);
    await sql`SET LOCAL lock_timeout = 0`.execute(trx);
    // Replicas starting together must not run the same migration twice.
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`weft-migrations:${table}`}))`.execute(trx);
    await sql
      .raw(
        `CREATE TABLE IF NOT EXISTS "${table}" (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      )
      .execute(trx);
    const rows = await trx.selectFrom(table).select('name').execute();
    const applied = new Set(rows.map((row) => String(row.name)));
    const appliedNow: string[] = [];
    for (const migration of migrations) {
      if (applied.has(migration.name)) continue;
      await migration.up(trx);
      await trx.insertInto(table).values({ name: migration.name }).execute();
      appliedNow.push(migration.name);
    }
    return appliedNow;
  });
}
