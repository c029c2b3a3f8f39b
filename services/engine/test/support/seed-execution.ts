import type { ExecutionEvent, ProcessRecord } from '@weft/contracts';
import type { PostgresEventStore } from '@weft/event-store';
import { postgresExecutionCommit } from '../../src/adapters/postgres/execution-commit.js';
import { graphSnapshotAppend } from '../../src/application/graph-snapshot-records.js';
import { snapshotOf } from '../../src/domain/graph/execution-graph.js';
import { graphSnapshotId } from '../../src/domain/graph/graph-snapshot-ids.js';

/**
 * Writes an execution's events as an engine that then died would have: through the engine's own
 * commit (events, read models, a lease already lapsed unless `leaseMs` says otherwise), so
 * engines find it orphaned. Lapsed by a second, not a millisecond: a lease is lapsed when it
 * expires before the claim's transaction starts, and on a fast machine a claim sent right after
 * the seed starts within the millisecond (orphan-takeover-bulk missed one of 250). Its start names
 * its graph, recorded in the same commit, as the engine writes it: a resume reads the graph back.
 */
export async function seedExecution(
  store: PostgresEventStore,
  process: ProcessRecord,
  events: (executionId: string, at: string) => ExecutionEvent[],
  overrides: { maxRetries?: number; owner?: string; leaseMs?: number } = {},
): Promise<string> {
  const executionId = crypto.randomUUID();
  const at = new Date().toISOString();
  const started: ExecutionEvent = {
    type: 'ExecutionStarted',
    data: {
      executionId,
      processId: process.id,
      organizationId: process.organization_id,
      processRevision: process.revision,
      triggerNodeId: process.nodes[0]!.id,
      inputData: {},
      graphSnapshotId: graphSnapshotId(snapshotOf(process)),
      triggeredByUserId: null,
      source: 'test',
      timeoutSeconds: process.timeout_seconds,
      maxRetries: overrides.maxRetries ?? process.max_retries,
      errorWebhookUrl: process.error_webhook_url,
      startedAt: at,
    },
  };
  const metadata = { organizationId: process.organization_id, processId: process.id, correlationId: executionId };
  const commit = postgresExecutionCommit(store, {
    owner: overrides.owner ?? 'engine-that-died',
    leaseMs: overrides.leaseMs ?? -1000,
  });
  const graph = graphSnapshotAppend(
    { processId: process.id, organizationId: process.organization_id, processRevision: process.revision },
    snapshotOf(process),
    metadata,
    Number.POSITIVE_INFINITY,
  );
  await commit([
    // Recorded by the first seed of the process only: the recording makes its stream.
    ...((await store.streamVersion(graph.streamId)) === 0 ? [graph] : []),
    {
      streamId: `execution-${executionId}`,
      events: [started, ...events(executionId, at)].map((event) => ({ type: event.type, data: event.data, metadata })),
      expectedVersion: 'no_stream',
    },
  ]);
  return executionId;
}
