import { migrate, type PostgresEventStore, type Projection } from '@weft/event-store';
import { executionsProjection, migrateEngineSchema } from '@weft/engine';
import { gatewayMigrations, gatewayProjections } from '@weft/gateway';
import { CATALOG_MIGRATIONS_TABLE, catalogMigrations, catalogProjections } from '@weft/process-catalog';
import { TESTING_MIGRATIONS_TABLE, testingMigrations, testingProjections } from '@weft/testing';

/** Creates every service's tables, as the services do at start, and returns every read model's projection. */
export async function prepareServiceSchemas(store: PostgresEventStore): Promise<Projection[]> {
  await migrate(store.db, gatewayMigrations, 'gateway_migrations');
  await migrate(store.db, catalogMigrations, CATALOG_MIGRATIONS_TABLE);
  await migrateEngineSchema(store.db);
  await migrate(store.db, testingMigrations, TESTING_MIGRATIONS_TABLE);
  return [...gatewayProjections, ...catalogProjections, executionsProjection, ...testingProjections];
}
