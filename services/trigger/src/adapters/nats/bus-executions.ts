import { engineInternal, engineQueues } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { ExecutionPort } from '../../application/trigger-ports.js';

/** Headroom over a sync wait for the engine's answer to travel back. */
const REPLY_MARGIN_MS = 10_000;

/** The engine's work queue (deduplicated by execution id) and its enqueue-and-wait subject. */
export const busExecutions = (bus: Bus): ExecutionPort => ({
  enqueue: (request) =>
    bus.enqueue(engineQueues.executionRequests, request, {
      msgId: request.executionId,
      correlationId: request.correlationId,
    }),
  run: (request, waitSeconds) =>
    bus.request(
      engineInternal.runExecution,
      { ...request, waitSeconds },
      { timeoutMs: waitSeconds * 1000 + REPLY_MARGIN_MS, correlationId: request.correlationId },
    ),
});
