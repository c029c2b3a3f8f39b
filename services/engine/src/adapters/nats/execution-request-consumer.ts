import { engineQueues, ProblemError, type ExecutionRequest, type WorkQueueSpec } from '@weft/contracts';
import type { Bus, Subscription } from '@weft/bus';
import type { Logger } from '@weft/observability';
import type { ExecutionEngine } from '../../application/execution-engine.js';
import type { UndeliverableRequests } from '../../application/undeliverable-requests.js';

/**
 * Takes execution requests from the work queue. A message is acked (handler resolves) once its
 * ExecutionStarted is stored; a request that can never run (unknown process, bad input node) is
 * acked and logged; anything else (catalog or database down) is redelivered later, and after
 * `maxDeliver` failed deliveries recorded as a failed execution or dead letter, never dropped.
 * Nothing is pulled while the engine runs its limit of executions: requests wait in the queue.
 */
export const EXECUTION_CONSUMER = 'engine-executions';
export const DEFAULT_EXECUTION_MAX_DELIVER = 20;

export function consumeExecutionRequests(
  bus: Bus,
  engine: ExecutionEngine,
  logger: Logger,
  options: {
    undeliverable: UndeliverableRequests;
    concurrency?: number;
    maxDeliver?: number;
    queue?: { spec: WorkQueueSpec<ExecutionRequest>; durable: string };
  },
): Promise<Subscription> {
  return bus.consume(
    options.queue?.spec ?? engineQueues.executionRequests,
    {
      durable: options.queue?.durable ?? EXECUTION_CONSUMER,
      concurrency: options.concurrency ?? 64,
      ackWaitMs: 30_000,
      gate: engine.slots,
      deadLetter: {
        afterDeliveries: options.maxDeliver ?? DEFAULT_EXECUTION_MAX_DELIVER,
        record: async (message, error) =>
          void (await options.undeliverable.record(message.payload, error, message.deliveryCount)),
      },
    },
    async (message) => {
      try {
        await engine.start(message.payload);
      } catch (error) {
        if (error instanceof ProblemError && error.status < 500) {
          logger.warn(
            { executionId: message.payload.executionId, problem: error.problem },
            'execution request refused',
          );
          return;
        }
        throw error;
      }
    },
  );
}
