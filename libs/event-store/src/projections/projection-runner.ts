import type { Projection, Trx } from '../event-store.js';
import type { PostgresEventStore } from '../adapters/postgres/postgres-event-store.js';
import { CatchUpLoop } from '../subscriptions/catch-up-loop.js';
import { loadCheckpoint, saveCheckpoint } from '../subscriptions/checkpoint-table.js';

export interface ProjectionRunnerOptions {
  batchSize?: number;
  pollMs?: number;
  onError?: (error: unknown) => void;
}

export interface ProjectionRunnerHandle {
  readonly name: string;
  stop(): Promise<void>;
  waitForPosition(position: number): Promise<void>;
}

/** Another writer (a rebuild) moved the checkpoint: reload it and go on from there. */
class CheckpointMovedError extends Error {
  override name = 'CheckpointMovedError';
}

/**
 * Runs an async projection: each batch is applied and its checkpoint stored in one transaction,
 * so the read model sees every event exactly once, even across crashes.
 */
export function startProjection(
  store: PostgresEventStore,
  projection: Projection,
  options: ProjectionRunnerOptions = {},
): ProjectionRunnerHandle {
  const table = 'projection_checkpoints';
  const loop = new CatchUpLoop({
    store,
    eventTypes: projection.eventTypes,
    batchSize: options.batchSize ?? 500,
    pollMs: options.pollMs ?? 500,
    loadCheckpoint: () => loadCheckpoint(store.db, table, projection.name),
    onError: options.onError,
    handleBatch: (events, reached) =>
      store.db.transaction().execute(async (trx) => {
        await lockCheckpoint(trx, projection.name, loop.position);
        for (const event of events) await projection.apply(trx, event);
        await saveCheckpoint(trx, table, projection.name, reached);
      }),
  });
  loop.start();
  return {
    name: projection.name,
    stop: () => loop.stop(),
    waitForPosition: (position) => loop.waitForPosition(position),
  };
}

/** Row-locks the projection's checkpoint (a rebuild holds the same lock) and checks it is ours. */
async function lockCheckpoint(trx: Trx, name: string, expected: number): Promise<void> {
  await trx
    .insertInto('projection_checkpoints')
    .values({ name, position: 0 })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await trx
    .selectFrom('projection_checkpoints')
    .select('position')
    .where('name', '=', name)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (Number(row.position) !== expected) throw new CheckpointMovedError(`checkpoint of ${name} moved`);
}
