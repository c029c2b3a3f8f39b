import { migrate, type Db, type Migration } from '@weft/event-store';
import {
  ENGINE_MIGRATIONS_TABLE,
  engineMigrations as readModelMigrations,
} from '../../projections/execution-read-model-migrations.js';
import { executionLeaseMigration } from './execution-leases.js';

/** Every table the engine owns, in order: read models, then leases. */
export const engineMigrations: Migration[] = [...readModelMigrations, executionLeaseMigration];

export const migrateEngineSchema = (db: Db): Promise<string[]> =>
  migrate(db, engineMigrations, ENGINE_MIGRATIONS_TABLE);
