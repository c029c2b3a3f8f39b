/**
 * A request to run one execution, put on the engine's work queue by the trigger service, the
 * testing service and `POST /processes/test`. Acked once its ExecutionStarted event is stored.
 */
export interface ExecutionRequest {
  /** Chosen by the sender so a redelivered request never starts a second execution. */
  executionId: string;
  processId: string;
  organizationId: string;
  /** Input node that fired; the only input node when absent. */
  inputNodeId?: string;
  inputData: unknown;
  triggeredByUserId?: string | null;
  triggeredByUserName?: string;
  source: 'trigger' | 'test' | 'testing' | 'manual';
  correlationId?: string;
  traceId?: string;
  /** ISO time the request was made (the execution's start when the engine is idle). */
  requestedAt: string;
}
