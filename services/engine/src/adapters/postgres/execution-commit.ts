import type { PostgresEventStore } from '@weft/event-store';
import type { CommitBatch } from '../../application/execution-event-writer.js';
import { applyExecutionEvents } from '../../projections/executions-projection.js';
import { followExecutionEvents } from './execution-leases.js';

/**
 * The engine's group commit on PostgreSQL/PGlite: the events, the execution read models (folded
 * per batch) and the leases in one transaction, so a read after the commit sees all of it.
 */
export function postgresExecutionCommit(
  store: PostgresEventStore,
  leases: { owner: string; leaseMs: number },
): CommitBatch {
  return async (batch) => {
    await store.db.transaction().execute(async (trx) => {
      const results = await store.appendInTransaction(trx, batch);
      const stored = results.flatMap((result) => result.events);
      await applyExecutionEvents(trx, stored);
      await followExecutionEvents(trx, leases, stored);
    });
    store.appendSignal.notify();
  };
}
