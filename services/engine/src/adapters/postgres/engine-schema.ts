import { migrate, type Db, type Migration } from '@weft/event-store';
import { errorWebhookDeliveriesMigration } from '../../projections/error-webhook-deliveries.js';
import { executionStatsFunctionMigration } from '../../projections/execution-stats-function-migration.js';
import { executionStatsMigration } from '../../projections/execution-stats-migration.js';
import { graphSnapshotsMigration } from '../../projections/graph-snapshots-migration.js';
import { longDurationsMigration } from '../../projections/long-durations-migration.js';
import { queuedExecutionsMigration } from '../../projections/queued-executions-migration.js';
import { tokenUsageMigration } from '../../projections/token-usage-migration.js';
import {
  ENGINE_MIGRATIONS_TABLE,
  engineMigrations as readModelMigrations,
} from '../../projections/execution-read-model-migrations.js';
import { errorWebhookQueueMigration } from './error-webhook-queue.js';
import { executionDeadLetterMigration } from './execution-dead-letters.js';
import { executionLeaseMigration } from './execution-leases.js';
import { parkedWaitsMigration } from './parked-waits.js';

/** Every table the engine owns, in order: read models, leases, parked waits, error-webhook deliveries, then changes and statistics (and the function that reads them), graph snapshots stored once. */
export const engineMigrations: Migration[] = [
  ...readModelMigrations,
  executionLeaseMigration,
  parkedWaitsMigration,
  errorWebhookQueueMigration,
  errorWebhookDeliveriesMigration,
  longDurationsMigration,
  executionDeadLetterMigration,
  queuedExecutionsMigration,
  executionStatsMigration,
  tokenUsageMigration,
  executionStatsFunctionMigration,
  graphSnapshotsMigration,
];

export const migrateEngineSchema = (db: Db): Promise<string[]> =>
  migrate(db, engineMigrations, ENGINE_MIGRATIONS_TABLE);
