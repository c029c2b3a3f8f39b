import { sql } from 'kysely';
import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { EXECUTION_EVENT_TYPES, type ExecutionEvent } from '../domain/execution/events.js';

/**
 * Inline projection of execution events into the history tables: one row per execution, one per
 * node (every node of the snapshot starts `pending`), and counts per process and status. Runs in
 * the append transaction, so a read right after a write sees it; `reset` + replay rebuilds it.
 */
const jsonb = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

async function moveCount(trx: Trx, processId: string, from: string | null, to: string): Promise<void> {
  if (from) {
    await sql`UPDATE engine_execution_counts SET count = count - 1 WHERE process_id = ${processId} AND status = ${from}`.execute(trx);
  }
  await sql`
    INSERT INTO engine_execution_counts (process_id, status, count) VALUES (${processId}, ${to}, 1)
    ON CONFLICT (process_id, status) DO UPDATE SET count = engine_execution_counts.count + 1`.execute(trx);
}

async function finish(trx: Trx, executionId: string, status: string, fields: Record<string, unknown>): Promise<void> {
  const row = await trx
    .updateTable('engine_executions')
    .set({ status, ...fields })
    .where('id', '=', executionId)
    .where('status', '=', 'running')
    .returning(['process_id'])
    .executeTakeFirst();
  if (!row) return;
  await moveCount(trx, String(row.process_id), 'running', status);
  // Nodes still running when the execution ended were stopped with it.
  await trx
    .updateTable('engine_node_states')
    .set({ status: 'cancelled' })
    .where('execution_id', '=', executionId)
    .where('status', '=', 'running')
    .execute();
}

export const executionsProjection: Projection = {
  name: 'engine-executions',
  eventTypes: EXECUTION_EVENT_TYPES,
  async apply(trx, stored: StoredEvent) {
    const event = { type: stored.type, data: stored.data } as ExecutionEvent;
    switch (event.type) {
      case 'ExecutionStarted': {
        const d = event.data;
        await trx
          .insertInto('engine_executions')
          .values({
            id: d.executionId,
            process_id: d.processId,
            organization_id: d.organizationId,
            status: 'running',
            started_at: d.startedAt,
            triggered_by_user_id: d.triggeredByUserId,
            trigger_node_id: d.triggerNodeId,
            attempt: 1,
            input_data: jsonb(d.inputData),
            graph_snapshot: jsonb(d.graphSnapshot),
          })
          .execute();
        if (d.graphSnapshot.nodes.length > 0) {
          await trx
            .insertInto('engine_node_states')
            .values(
              d.graphSnapshot.nodes.map((node, position) => ({
                execution_id: d.executionId,
                node_id: node.id,
                position,
                node_name: typeof node.config.label === 'string' ? node.config.label : node.id,
                node_type: node.type,
                status: 'pending',
              })),
            )
            .execute();
        }
        await moveCount(trx, d.processId, null, 'running');
        return;
      }
      case 'NodeStarted': {
        const d = event.data;
        const inLoop = (d.iteration?.length ?? 0) > 0;
        await trx
          .updateTable('engine_node_states')
          .set({
            status: 'running',
            started_at: d.startedAt,
            completed_at: null,
            duration_ms: null,
            input_data: jsonb(d.inputData),
            error: null,
            ...(inLoop ? { iterations: sql`coalesce(iterations, 0) + 1` } : {}),
          })
          .where('execution_id', '=', d.executionId)
          .where('node_id', '=', d.nodeId)
          .execute();
        return;
      }
      case 'NodeCompleted': {
        const d = event.data;
        await trx
          .updateTable('engine_node_states')
          .set({ status: 'completed', completed_at: d.completedAt, duration_ms: d.durationMs, output_data: jsonb(d.outputData) })
          .where('execution_id', '=', d.executionId)
          .where('node_id', '=', d.nodeId)
          .execute();
        return;
      }
      case 'NodeFailed': {
        const d = event.data;
        await trx
          .updateTable('engine_node_states')
          .set({ status: 'failed', completed_at: d.completedAt, duration_ms: d.durationMs, error: d.error })
          .where('execution_id', '=', d.executionId)
          .where('node_id', '=', d.nodeId)
          .execute();
        return;
      }
      case 'NodeSkipped': {
        const d = event.data;
        // A body node skipped in one iteration may have completed in another: keep the richer state.
        await trx
          .updateTable('engine_node_states')
          .set({ status: 'skipped', completed_at: d.skippedAt })
          .where('execution_id', '=', d.executionId)
          .where('node_id', '=', d.nodeId)
          .where('status', '=', 'pending')
          .execute();
        return;
      }
      case 'ExecutionRetryScheduled':
        await trx.updateTable('engine_executions').set({ attempt: event.data.attempt }).where('id', '=', event.data.executionId).execute();
        return;
      case 'ExecutionCompleted': {
        const d = event.data;
        await finish(trx, d.executionId, 'completed', {
          completed_at: d.completedAt,
          duration_ms: Math.round(d.durationSeconds * 1000),
          output_data: jsonb(d.outputData),
        });
        return;
      }
      case 'ExecutionFailed': {
        const d = event.data;
        await finish(trx, d.executionId, 'failed', {
          completed_at: d.completedAt,
          duration_ms: Math.round(d.durationSeconds * 1000),
          error_message: d.errorMessage,
          failed_node_id: d.failedNode?.id ?? null,
          failed_node_name: d.failedNode?.name ?? null,
          attempt: d.attempt,
        });
        return;
      }
      case 'ExecutionTimedOut': {
        const d = event.data;
        await finish(trx, d.executionId, 'timeout', {
          completed_at: d.completedAt,
          duration_ms: Math.round(d.durationSeconds * 1000),
          error_message: d.errorMessage,
        });
        return;
      }
      case 'ExecutionCancelled': {
        const d = event.data;
        await finish(trx, d.executionId, 'cancelled', {
          completed_at: d.completedAt,
          duration_ms: Math.round(d.durationSeconds * 1000),
        });
        return;
      }
      default: {
        const unknown: never = event;
        throw new Error(`unknown execution event ${JSON.stringify(unknown)}`);
      }
    }
  },
  async reset(trx) {
    await sql`DELETE FROM engine_node_states`.execute(trx);
    await sql`DELETE FROM engine_executions`.execute(trx);
    await sql`DELETE FROM engine_execution_counts`.execute(trx);
  },
};
