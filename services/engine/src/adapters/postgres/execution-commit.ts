import { streamKey } from '@weft/contracts';
import type { PostgresEventStore } from '@weft/event-store';
import type { CommitBatch } from '../../application/execution-event-writer.js';
import { ExecutionRowCache } from '../../projections/execution-row-cache.js';
import { executionEventWrites } from '../../projections/executions-projection.js';
import type { RecentlyFinishedRows } from '../../projections/recently-finished-rows.js';
import { errorWebhookQueueWritesFor } from './error-webhook-queue.js';
import { leaseWritesFor } from './execution-leases.js';
import { parkWritesFor } from './parked-waits.js';

/**
 * The engine's group commit on PostgreSQL/PGlite: the events, the execution read models (folded
 * per batch), the leases, parked waits and error-webhook queue in one transaction, so a read after
 * the commit sees all of it. They go in one statement; the rows of executions running here are
 * kept between commits (`ExecutionRowCache`) instead of being read back each time, and the rows of
 * executions written whole go to their waiting callers (`RecentlyFinishedRows`).
 */
export function postgresExecutionCommit(
  store: PostgresEventStore,
  leases: { owner: string; leaseMs: number },
  cache: ExecutionRowCache = new ExecutionRowCache(),
  finished?: RecentlyFinishedRows,
): CommitBatch {
  return async (batch) => {
    let cacheRows: () => void = () => undefined;
    const parked: string[] = [];
    // Events, read models, leases, parked waits and deliveries in one statement; rows folded before it is sent.
    await store.appendAtOnce(batch, {
      alongside: async (events, reader) => {
        const writes = await executionEventWrites(reader, events, cache, finished);
        if (!writes) return undefined;
        cacheRows = writes.afterCommit;
        for (const event of events) if (event.type === 'ExecutionParked') parked.push(streamKey(event.streamId));
        return [
          ...writes.statements,
          ...leaseWritesFor(leases, events),
          ...parkWritesFor(events),
          ...errorWebhookQueueWritesFor(events),
        ];
      },
    });
    cacheRows();
    // A parked execution leaves this engine's memory, its cached rows too.
    for (const executionId of parked) cache.take(executionId, -1);
  };
}
