import { engineInternal } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { ExecutionPort } from '../../application/trigger-ports.js';

/** Headroom over a sync wait for the engine's answer to travel back. */
const REPLY_MARGIN_MS = 10_000;

/**
 * Through the engine's enqueue-and-wait subject (its work queue deduplicates by execution id): the
 * engine records the acceptance before it queues, so the id a webhook answers with is readable and
 * cancellable at once. `enqueue` waits for nothing more.
 */
export const busExecutions = (bus: Bus): ExecutionPort => ({
  enqueue: async (request) => {
    await bus.request(
      engineInternal.runExecution,
      { ...request, waitSeconds: 0 },
      { timeoutMs: REPLY_MARGIN_MS, correlationId: request.correlationId },
    );
  },
  run: (request, waitSeconds) =>
    bus.request(
      engineInternal.runExecution,
      { ...request, waitSeconds },
      { timeoutMs: waitSeconds * 1000 + REPLY_MARGIN_MS, correlationId: request.correlationId },
    ),
});
