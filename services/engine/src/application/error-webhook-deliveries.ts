import type { ErrorWebhookPayload, ExecutionEvent } from '@weft/contracts';
import type { EventStore, NewEvent } from '@weft/event-store';
import type { Logger } from '@weft/observability';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId } from '../domain/execution/events.js';
import { foldExecution } from '../domain/execution/state.js';
import type { ErrorWebhookQueue, ErrorWebhookSender } from './engine-ports.js';
import { storableText } from '../domain/graph/json-value.js';

/**
 * Durable error-webhook delivery. A failure with a webhook is queued in the commit of its terminal
 * event; this worker claims due deliveries, rebuilds the report from the execution's events,
 * POSTs it and records the attempt as an event (`ErrorWebhookDeliveryAttempted`), whose commit
 * moves the queue row to the next attempt (exponential backoff) or removes it. Nothing lives
 * only in memory: a delivery whose engine died is claimed again once its claim lapses.
 */
export interface ErrorWebhookPolicy {
  /** Attempts before giving up; default 15 (about 6 hours with the default backoff). */
  maxAttempts: number;
  /** Delay before the second attempt, doubled for each one after; default 5 s. */
  backoffMs: number;
  /** Longest delay between two attempts; default 1 hour. */
  maxBackoffMs: number;
  /** How long an engine holds a delivery it is attempting (more than one attempt's timeout). */
  claimMs: number;
  /** Deliveries claimed per pass. */
  batch: number;
}

export const DEFAULT_ERROR_WEBHOOK_POLICY: ErrorWebhookPolicy = {
  maxAttempts: 15,
  backoffMs: 5000,
  maxBackoffMs: 3_600_000,
  claimMs: 30_000,
  batch: 50,
};

export interface ErrorWebhookDeliveriesDeps {
  store: EventStore;
  queue: ErrorWebhookQueue;
  sender: ErrorWebhookSender;
  /** Appends to a stream through the engine's group commit. */
  append: (streamId: string, events: NewEvent[], expectedVersion: number) => Promise<void>;
  now: () => Date;
  logger: Logger;
  policy?: Partial<ErrorWebhookPolicy>;
}

export class ErrorWebhookDeliveries {
  private readonly policy: ErrorWebhookPolicy;
  private pass: Promise<number> | null = null;
  private again = false;

  constructor(private readonly deps: ErrorWebhookDeliveriesDeps) {
    this.policy = { ...DEFAULT_ERROR_WEBHOOK_POLICY, ...deps.policy };
  }

  /** Delay after attempt `attempt` (1, 2 ...). */
  backoffAfter(attempt: number): number {
    return Math.min(this.policy.maxBackoffMs, this.policy.backoffMs * 2 ** (attempt - 1));
  }

  /** Runs a pass soon (a failure was just recorded); passes never overlap. */
  poke(): void {
    void this.deliverDue().catch((error: unknown) =>
      this.deps.logger.warn({ err: error }, 'error webhook delivery pass failed'),
    );
  }

  /** Attempts every delivery due now; resolves to the number attempted. */
  async deliverDue(): Promise<number> {
    if (this.pass) {
      this.again = true;
      return this.pass;
    }
    this.pass = (async () => {
      let attempted = 0;
      do {
        this.again = false;
        const ids = await this.deps.queue.claimDue(this.deps.now(), this.policy.batch, this.policy.claimMs);
        // A delivery that fails here keeps its claim until it lapses, then is tried again.
        await Promise.all(
          ids.map((id) =>
            this.deliver(id).catch((error: unknown) =>
              this.deps.logger.warn({ err: error, executionId: id }, 'error webhook delivery not recorded'),
            ),
          ),
        );
        attempted += ids.length;
        if (ids.length === this.policy.batch) this.again = true;
      } while (this.again);
      return attempted;
    })().finally(() => (this.pass = null));
    return this.pass;
  }

  /** Resolves when no pass is running (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.pass) await this.pass.catch(() => undefined);
  }

  private async deliver(executionId: string): Promise<void> {
    const stored = await this.deps.store.readStream(executionStreamId(executionId));
    const state = foldExecution(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
    const url = state.started?.errorWebhookUrl;
    const report = reportOf(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
    if (!url || !report || !state.started) {
      await this.deps.queue.drop(executionId);
      return;
    }
    const attempt = state.errorWebhookAttempts + 1;
    const traceId = stored[0]?.metadata.traceId;
    const payload: ErrorWebhookPayload = {
      processId: state.started.processId,
      executionId,
      ...report,
      traceId: typeof traceId === 'string' ? traceId : null,
    };
    const result = await this.deps.sender.send(url, payload, attempt);
    const outcome = result.delivered
      ? 'delivered'
      : result.retry && attempt < this.policy.maxAttempts
        ? 'retrying'
        : 'abandoned';
    const now = this.deps.now();
    const events = decide(
      {
        type: 'RecordErrorWebhookAttempt',
        data: {
          outcome,
          httpStatus: result.httpStatus,
          // The answer's excerpt is the receiver's text: jsonb refuses a NUL or a surrogate cut in half.
          error: result.error === null ? null : storableText(result.error),
          nextAttemptAt: outcome === 'retrying' ? new Date(now.getTime() + this.backoffAfter(attempt)) : null,
        },
        metadata: { now },
      },
      state,
    );
    await this.deps.append(
      executionStreamId(executionId),
      events.map((event) => ({ type: event.type, data: event.data, metadata: stored[0]?.metadata ?? {} })),
      stored.length,
    );
    if (outcome === 'abandoned')
      this.deps.logger.warn({ executionId, attempt, error: result.error }, 'error webhook not delivered, given up');
  }
}

/** The report's failure fields, from the execution's terminal event. */
function reportOf(
  events: readonly ExecutionEvent[],
): Omit<ErrorWebhookPayload, 'processId' | 'executionId' | 'traceId'> | null {
  let attempt = 1;
  for (const event of events) {
    if (event.type === 'ExecutionRetryScheduled') attempt = event.data.attempt;
    if (event.type === 'ExecutionFailed') {
      const { errorMessage, failedNode } = event.data;
      return { status: 'failed', error: errorMessage, failedNode, attempt: event.data.attempt };
    }
    if (event.type === 'ExecutionTimedOut')
      return { status: 'timeout', error: event.data.errorMessage, failedNode: null, attempt };
  }
  return null;
}
