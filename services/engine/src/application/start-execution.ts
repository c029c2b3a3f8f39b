import type { ExecutionRequest, ProcessRecord } from '@weft/contracts';
import type { EventMetadata } from '@weft/event-store';
import type { ExecutionCommand } from '../domain/execution/commands.js';
import { snapshotOf } from '../domain/graph/execution-graph.js';

/** Seconds an execution may run when its process sets no timeout. */
const DEFAULT_TIMEOUT_SECONDS = 300;

/**
 * The StartExecution command of a request on a process: one place, so an execution the engine runs
 * and one recorded as undeliverable (started, then failed) carry the same start.
 */
export function startExecutionCommand(
  request: ExecutionRequest,
  process: ProcessRecord,
  triggerNodeId: string,
  now: Date,
): Extract<ExecutionCommand, { type: 'StartExecution' }> {
  return {
    type: 'StartExecution',
    data: {
      executionId: request.executionId,
      processId: process.id,
      organizationId: process.organization_id,
      processRevision: process.revision,
      triggerNodeId,
      inputData: request.inputData ?? null,
      graphSnapshot: snapshotOf(process),
      triggeredByUserId: request.triggeredByUserId ?? null,
      source: request.source,
      timeoutSeconds: process.timeout_seconds > 0 ? process.timeout_seconds : DEFAULT_TIMEOUT_SECONDS,
      maxRetries: Math.max(0, process.max_retries ?? 0),
      errorWebhookUrl: process.error_webhook_url ?? null,
    },
    metadata: { now },
  };
}

/** Who and what an execution's events carry (actor, organization, process, correlation and trace ids). */
export function executionMetadataOf(request: ExecutionRequest): EventMetadata {
  return {
    actorId: request.triggeredByUserId ?? undefined,
    actorName: request.triggeredByUserName,
    organizationId: request.organizationId,
    processId: request.processId,
    correlationId: request.correlationId ?? request.executionId,
    traceId: request.traceId,
  };
}
