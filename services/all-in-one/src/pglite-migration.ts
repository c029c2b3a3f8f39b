import { rename } from 'node:fs/promises';
import type { WeftConfig } from '@weft/config';
import { openDatabase, PostgresEventStore, rebuildReadModels, type Db } from '@weft/event-store';
import {
  EmbeddedPostgresError,
  hasPgliteData,
  openEmbeddedDatabase,
  pgliteDir,
  startConfiguredEmbeddedPostgres,
} from '@weft/runtime';
import { sql } from 'kysely';
import { prepareServiceSchemas } from './read-model-schemas.js';

const COPY_BATCH = 2000;

/** Where the PGlite folder goes once its data is in the embedded PostgreSQL: kept as a backup. */
export const migratedPgliteDir = (dataDir: string): string => `${pgliteDir(dataDir)}.migrated`;

interface Column {
  name: string;
  dataType: string;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

async function tables(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db);
  return rows.rows.map((row) => row.name);
}

async function columns(db: Db, table: string): Promise<Column[]> {
  const rows = await sql<Column>`
    SELECT column_name AS "name", udt_name AS "dataType" FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name = ${table} ORDER BY ordinal_position`.execute(db);
  return rows.rows;
}

async function count(db: Db, table: string): Promise<number> {
  const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db);
  return Number(rows.rows[0]!.n);
}

/**
 * Copies one table's rows as JSON text (never parsed here, so bigints and jsonb keep every digit)
 * through a cursor, then moves its sequences past the copied ids. xid8 columns take the new
 * server's default: PGlite's transaction ids mean nothing there (events.transaction_id would
 * otherwise hold subscribers back forever).
 */
async function copyTable(source: Db, target: Db, table: string, report: (line: string) => void): Promise<number> {
  const targetColumns = new Map((await columns(target, table)).map((column) => [column.name, column]));
  const shared = (await columns(source, table))
    .filter((column) => targetColumns.has(column.name) && column.dataType !== 'xid8')
    .map((column) => quote(column.name));
  if (shared.length === 0) return 0;
  const list = shared.join(', ');
  const total = await count(source, table);
  await sql.raw(`TRUNCATE ${quote(table)}`).execute(target);
  let copied = 0;
  await source.transaction().execute(async (trx) => {
    await sql
      .raw(
        `DECLARE weft_copy NO SCROLL CURSOR FOR SELECT row_to_json(r)::text AS row FROM (SELECT ${list}
      FROM ${quote(table)}) r`,
      )
      .execute(trx);
    for (;;) {
      const rows = await sql.raw<{ row: string }>(`FETCH ${COPY_BATCH} FROM weft_copy`).execute(trx);
      if (rows.rows.length === 0) break;
      const batch = `[${rows.rows.map((row) => row.row).join(',')}]`;
      await sql`${sql.raw(`INSERT INTO ${quote(table)} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list}
        FROM jsonb_populate_recordset(null::${quote(table)}, `)}${batch}::jsonb)`.execute(target);
      copied += rows.rows.length;
      if (total > COPY_BATCH) report(`  ${table}: ${copied} / ${total} rows`);
    }
    await sql.raw('CLOSE weft_copy').execute(trx);
  });
  for (const column of targetColumns.keys()) {
    const sequence = await sql<{ seq: string | null }>`
      SELECT pg_get_serial_sequence(${quote(table)}, ${column}) AS seq`.execute(target);
    const seq = sequence.rows[0]?.seq;
    if (!seq || copied === 0) continue;
    await sql`SELECT setval(${seq}::regclass, (SELECT max(${sql.ref(column)}) FROM ${sql.table(table)}))`.execute(
      target,
    );
  }
  return copied;
}

const isBookkeeping = (table: string): boolean => table.endsWith('_migrations');

/**
 * Moves a PGlite data dir (Weft before the embedded PostgreSQL) into the embedded PostgreSQL:
 * every table's rows (the events first among equals) in one transaction, then every read model
 * rebuilt from the events; the PGlite folder is renamed to `pgdata.migrated` and kept. Safe to run
 * again after a crash: the copy is all or nothing.
 */
export async function migratePgliteDataDir(config: WeftConfig, report: (line: string) => void): Promise<void> {
  if (!hasPgliteData(config.dataDir)) {
    report(`no PGlite database in ${pgliteDir(config.dataDir)}: nothing to migrate`);
    return;
  }
  report(`migrating the PGlite database in ${pgliteDir(config.dataDir)} into the embedded PostgreSQL`);
  const source = await openDatabase({ dataDir: pgliteDir(config.dataDir) });
  try {
    const server = await startConfiguredEmbeddedPostgres(config);
    const target = await openEmbeddedDatabase(config, server);
    try {
      const store = await PostgresEventStore.open(target);
      const projections = await prepareServiceSchemas(store);
      const [sourceEvents, targetEvents] = [await count(source.db, 'events'), await count(store.db, 'events')];
      if (targetEvents > 0 && targetEvents !== sourceEvents) {
        throw new EmbeddedPostgresError(
          `the embedded PostgreSQL in ${config.dataDir} already holds ${targetEvents} events and the PGlite ` +
            `database ${sourceEvents}: not migrating over them; move one of them away`,
        );
      }
      if (targetEvents === 0) {
        const targetTables = new Set(await tables(store.db));
        await store.db.transaction().execute(async (trx) => {
          for (const table of await tables(source.db)) {
            if (isBookkeeping(table)) continue;
            if (!targetTables.has(table)) {
              report(`  ${table}: skipped (no such table in this version of Weft)`);
              continue;
            }
            report(`  ${table}: ${await copyTable(source.db, trx, table, report)} rows`);
          }
        });
      }
      report('rebuilding the read models from the events');
      const applied = await rebuildReadModels(store, projections);
      for (const [name, events] of Object.entries(applied)) report(`  ${name}: ${events} events`);
      await store.close();
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
  await rename(pgliteDir(config.dataDir), migratedPgliteDir(config.dataDir));
  report(`done; the PGlite folder is kept as ${migratedPgliteDir(config.dataDir)} (delete it when satisfied)`);
}
