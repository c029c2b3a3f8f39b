import type { Projection } from '../event-store.js';
import type { PostgresEventStore } from '../adapters/postgres/postgres-event-store.js';
import { saveCheckpoint } from '../subscriptions/checkpoint-table.js';

const REPLAY_BATCH = 1000;

/**
 * Rebuilds read models from the events alone, in one transaction: reset() each, then replay every
 * event of their types through apply(), in position order. Appends wait meanwhile (the append
 * lock is held), so no event is applied twice or missed. Returns events applied per projection.
 */
export async function rebuildReadModels(
  store: PostgresEventStore,
  projections: readonly Projection[],
): Promise<Record<string, number>> {
  const applied: Record<string, number> = Object.fromEntries(projections.map((p) => [p.name, 0]));
  const eventTypes = [...new Set(projections.flatMap((p) => p.eventTypes))];
  await store.db.transaction().execute(async (trx) => {
    await store.lockAppends(trx);
    for (const projection of projections) {
      // Taken first so an async runner of the same projection waits, then sees the moved checkpoint.
      await saveCheckpoint(trx, 'projection_checkpoints', projection.name, 0);
      await projection.reset(trx);
    }
    const head = await store.headPosition(trx);
    let position = 0;
    for (;;) {
      const events = await store.readAll(
        { fromPosition: position, toPosition: head, limit: REPLAY_BATCH, eventTypes },
        trx,
      );
      for (const event of events) {
        for (const projection of projections) {
          if (!projection.eventTypes.includes(event.type)) continue;
          await projection.apply(trx, event);
          applied[projection.name] = (applied[projection.name] ?? 0) + 1;
        }
      }
      if (events.length < REPLAY_BATCH) break;
      position = events[events.length - 1]!.position;
    }
    for (const projection of projections) await saveCheckpoint(trx, 'projection_checkpoints', projection.name, head);
  });
  return applied;
}

/** Rebuilds one read model (see rebuildReadModels). */
export async function rebuildProjection(store: PostgresEventStore, projection: Projection): Promise<number> {
  const applied = await rebuildReadModels(store, [projection]);
  return applied[projection.name] ?? 0;
}
