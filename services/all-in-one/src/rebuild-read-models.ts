import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { migrate, PostgresEventStore, rebuildReadModels } from '@weft/event-store';
import { executionsProjection, migrateEngineSchema } from '@weft/engine';
import { gatewayMigrations, gatewayProjections } from '@weft/gateway';
import { CATALOG_MIGRATIONS_TABLE, catalogMigrations, catalogProjections } from '@weft/process-catalog';
import { openConfiguredDatabase } from '@weft/runtime';
import { TESTING_MIGRATIONS_TABLE, testingMigrations, testingProjections } from '@weft/testing';

/**
 * `pnpm rebuild-read-models`: empties every read model and replays all events into it, in one
 * transaction (appends wait meanwhile). Uses WEFT_DATABASE_URL, else the embedded database in
 * WEFT_DATA_DIR (stop the embedded server first: PGlite has one writer).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const database = await openConfiguredDatabase(config);
  try {
    const store = await PostgresEventStore.open(database);
    await migrate(store.db, gatewayMigrations, 'gateway_migrations');
    await migrate(store.db, catalogMigrations, CATALOG_MIGRATIONS_TABLE);
    await migrateEngineSchema(store.db);
    await migrate(store.db, testingMigrations, TESTING_MIGRATIONS_TABLE);
    const projections = [...gatewayProjections, ...catalogProjections, executionsProjection, ...testingProjections];
    const started = Date.now();
    const applied = await rebuildReadModels(store, projections);
    for (const [name, count] of Object.entries(applied)) process.stdout.write(`${name}: ${count} events\n`);
    process.stdout.write(`rebuilt ${projections.length} read models in ${Date.now() - started} ms\n`);
    await store.close();
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`rebuild failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
