import type { PostgresEventStore } from '@weft/event-store';
import type { CommitBatch } from '../../application/execution-event-writer.js';
import { ExecutionRowCache } from '../../projections/execution-row-cache.js';
import { executionEventWrites } from '../../projections/executions-projection.js';
import { leaseWritesFor } from './execution-leases.js';

/**
 * The engine's group commit on PostgreSQL/PGlite: the events, the execution read models (folded
 * per batch) and the leases in one transaction, so a read after the commit sees all of it. The
 * events, read models and leases go in one statement; the rows of executions running here are kept
 * between commits (`ExecutionRowCache`) instead of being read back each time.
 */
export function postgresExecutionCommit(
  store: PostgresEventStore,
  leases: { owner: string; leaseMs: number },
  cache: ExecutionRowCache = new ExecutionRowCache(),
): CommitBatch {
  return async (batch) => {
    const afterCommit = await store.db.transaction().execute(async (trx) => {
      let cacheRows: () => void = () => undefined;
      // Events, read models and leases in one statement; the rows are folded before it is sent.
      await store.appendInTransaction(trx, batch, {
        alongside: async (events) => {
          const writes = await executionEventWrites(trx, events, cache);
          cacheRows = writes.afterCommit;
          return [...writes.statements, ...leaseWritesFor(leases, events)];
        },
      });
      return cacheRows;
    });
    afterCommit();
    store.appendSignal.notify();
  };
}
