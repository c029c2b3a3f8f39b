import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { PostgresEventStore, rebuildReadModels } from '@weft/event-store';
import { gatewayMigrations, gatewayProjections } from '@weft/gateway';
import { migrate } from '@weft/event-store';
import { openConfiguredDatabase } from '@weft/runtime';

/** `pnpm rebuild-read-models`: empties every read model and replays all events into it. */
async function main(): Promise<void> {
  const config = loadConfig();
  const database = await openConfiguredDatabase(config);
  try {
    const store = await PostgresEventStore.open(database);
    await migrate(store.db, gatewayMigrations, 'gateway_migrations');
    const projections = [...gatewayProjections];
    const started = Date.now();
    await rebuildReadModels(store, projections);
    process.stdout.write(`rebuilt ${projections.map((p) => p.name).join(', ')} in ${Date.now() - started} ms\n`);
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`rebuild failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
