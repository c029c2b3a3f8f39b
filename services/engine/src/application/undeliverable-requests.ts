import type { ExecutionRequest, ProcessRecord } from '@weft/contracts';
import { WrongExpectedVersionError, type StreamAppend } from '@weft/event-store';
import type { Logger } from '@weft/observability';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId, type ExecutionEvent } from '../domain/execution/events.js';
import { foldExecution, initialExecutionState } from '../domain/execution/state.js';
import { chooseTriggerNode } from '../domain/graph/trigger-node.js';
import type { ProcessDirectory } from './engine-ports.js';
import type { CommitBatch } from './execution-event-writer.js';
import { graphSnapshotAppend } from './graph-snapshot-records.js';
import { executionMetadataOf, startExecutionCommand } from './start-execution.js';
import { storableText } from '../domain/graph/json-value.js';

/** A request kept for an operator to replay (docs/engine.md, "Undeliverable requests"). */
export interface DeadLetteredRequest {
  request: ExecutionRequest;
  error: string;
  deliveryCount: number;
}

export interface ExecutionDeadLetters {
  add(entry: DeadLetteredRequest): Promise<void>;
}

export interface UndeliverableRequestsDeps {
  directory: ProcessDirectory;
  /** The engine's commit, so the read model (GET execution) and leases follow the events. */
  commit: CommitBatch;
  deadLetters: ExecutionDeadLetters;
  logger: Logger;
  now?: () => Date;
}

const MAX_CAUSE_CHARS = 2000;

// storableText after the cut: the cut may split a surrogate pair, and a message may quote user data.
const causeOf = (error: unknown): string =>
  storableText((error instanceof Error ? error.message : String(error)).slice(0, MAX_CAUSE_CHARS));

/**
 * An execution request that failed every delivery is never dropped. When its process loads, the
 * execution is recorded as failed (ExecutionStarted + ExecutionFailed with the cause and delivery
 * count: GET /executions/:id shows it); when not, the request goes to the dead-letter table to be
 * replayed. A throw (the database is down too) keeps the request queued for a later try.
 */
export class UndeliverableRequests {
  private readonly now: () => Date;

  constructor(private readonly deps: UndeliverableRequestsDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async record(request: ExecutionRequest, error: unknown, deliveryCount: number): Promise<'failed' | 'dead-lettered'> {
    const cause = `execution request failed ${deliveryCount} deliveries: ${causeOf(error)}`;
    const process = await this.deps.directory.getProcess(request.processId, request.organizationId).catch(() => null);
    if (!process || process.organization_id !== request.organizationId) {
      await this.deps.deadLetters.add({ request, error: cause, deliveryCount });
      this.deps.logger.error(
        { executionId: request.executionId, processId: request.processId, deliveryCount },
        'execution request dead-lettered',
      );
      return 'dead-lettered';
    }
    const { graph, events } = this.failedExecution(request, process, cause, deliveryCount);
    // The graph's recording makes its stream: one that exists is on record already.
    let recording: StreamAppend[] = [graph];
    // A new stream, or one holding only the request's ExecutionAccepted (version 1).
    for (const expectedVersion of ['no_stream', 1] as const) {
      try {
        const failed = { streamId: executionStreamId(request.executionId), events, expectedVersion };
        await this.deps.commit([...recording, failed]).catch(async (error: unknown) => {
          const recorded = error instanceof WrongExpectedVersionError && error.streamId === graph.streamId;
          if (!recorded || error.actual <= 0) throw error;
          recording = [];
          await this.deps.commit([failed]);
        });
        break;
      } catch (commitError) {
        // It started after all (a slow commit that landed), or was cancelled while queued: nothing to record.
        if (!(commitError instanceof WrongExpectedVersionError)) throw commitError;
      }
    }
    this.deps.logger.error({ executionId: request.executionId, deliveryCount }, 'execution request recorded as failed');
    return 'failed';
  }

  /** The start and failure, and the recording of the graph the start names (it goes first, in the same commit). */
  private failedExecution(
    request: ExecutionRequest,
    process: ProcessRecord,
    cause: string,
    deliveryCount: number,
  ): { graph: StreamAppend; events: StreamAppend['events'] } {
    const now = this.now();
    const metadata = executionMetadataOf(request);
    let triggerNodeId: string;
    try {
      triggerNodeId = chooseTriggerNode(process, request.inputNodeId);
    } catch {
      triggerNodeId = request.inputNodeId ?? process.nodes[0]?.id ?? 'unknown';
    }
    const start = startExecutionCommand(request, process, triggerNodeId, now);
    const started = decide(start, initialExecutionState());
    // Rare enough to record the graph every time; no size limit, as the start itself never had one here.
    const graph = graphSnapshotAppend(start.data, start.data.graphSnapshot, metadata, Number.POSITIVE_INFINITY);
    const failed = decide(
      { type: 'FailExecution', data: { errorMessage: cause, failedNode: null }, metadata: { now } },
      foldExecution(started),
    ).map((event): ExecutionEvent =>
      event.type === 'ExecutionFailed' ? { ...event, data: { ...event.data, deliveryCount } } : event,
    );
    const events = [...started, ...failed].map((event) => ({ type: event.type, data: event.data, metadata }));
    return { graph, events };
  }
}
