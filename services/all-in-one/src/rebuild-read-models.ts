import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { PostgresEventStore, rebuildReadModels } from '@weft/event-store';
import { openConfiguredDatabase } from '@weft/runtime';
import { prepareServiceSchemas } from './read-model-schemas.js';

/**
 * `pnpm rebuild-read-models`: empties every read model and replays all events into it, in one
 * transaction (appends wait meanwhile). Uses WEFT_DATABASE_URL, else the embedded database in
 * WEFT_DATA_DIR (stop Weft first: the embedded PostgreSQL of a data dir runs once).
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const database = await openConfiguredDatabase(config);
  try {
    const store = await PostgresEventStore.open(database);
    const projections = await prepareServiceSchemas(store);
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
