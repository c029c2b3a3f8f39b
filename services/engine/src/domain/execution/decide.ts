import { conflict, notFound } from '@weft/contracts';
import type { ExecutionCommand } from './commands.js';
import { graphSnapshotId } from '../graph/graph-snapshot-ids.js';
import type { ExecutionEvent } from './events.js';
import { isFinished, runKey, type ExecutionState } from './state.js';

/**
 * Commands to events, pure. Refusals are ProblemErrors: 404 for an execution that never started,
 * 409 for a step that does not fit its state (finished execution, node not running ...).
 */
const secondsSince = (state: ExecutionState, now: Date): number =>
  state.started ? Math.max(0, (now.getTime() - Date.parse(state.started.startedAt)) / 1000) : 0;

/** Failed and timed-out executions report to the process's error webhook, when it has one. */
const reportsFailure = (state: ExecutionState): boolean =>
  (state.status === 'failed' || state.status === 'timeout') && !!state.started?.errorWebhookUrl;

/** Recorded with the terminal event, so the delivery is durable from the moment the failure is. */
const errorWebhookScheduled = (state: ExecutionState, at: string): ExecutionEvent[] =>
  state.started?.errorWebhookUrl
    ? [{ type: 'ErrorWebhookDeliveryScheduled', data: { executionId: state.started.executionId, scheduledAt: at } }]
    : [];

export function decide(command: ExecutionCommand, state: ExecutionState): ExecutionEvent[] {
  const now = command.metadata.now;
  const at = now.toISOString();
  if (command.type === 'AcceptExecution') {
    if (state.accepted || state.status !== 'not_started')
      throw conflict(`execution ${command.data.executionId} already accepted`);
    return [{ type: 'ExecutionAccepted', data: { ...command.data, acceptedAt: at } }];
  }
  if (command.type === 'StartExecution') {
    if (state.status !== 'not_started') throw conflict(`execution ${command.data.executionId} already started`);
    const { graphSnapshot, ...start } = command.data;
    return [
      { type: 'ExecutionStarted', data: { ...start, graphSnapshotId: graphSnapshotId(graphSnapshot), startedAt: at } },
    ];
  }
  if (!state.started) return decideQueued(command, state, at);
  const executionId = state.started.executionId;
  if (command.type === 'RecordErrorWebhookAttempt') {
    if (!reportsFailure(state)) throw conflict(`execution ${executionId} has no failure to report`);
    const { outcome, httpStatus, error, nextAttemptAt } = command.data;
    return [
      {
        type: 'ErrorWebhookDeliveryAttempted',
        data: {
          executionId,
          attempt: state.errorWebhookAttempts + 1,
          outcome,
          httpStatus,
          error,
          attemptedAt: at,
          nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
        },
      },
    ];
  }
  if (isFinished(state)) throw conflict(`execution ${executionId} is already ${state.status}`);

  switch (command.type) {
    case 'StartNode': {
      const { nodeId, iteration, nodeName, nodeType, inputFrom, loopItem } = command.data;
      const run = state.nodeRuns.get(runKey(nodeId, iteration));
      if (run?.status === 'completed' || run?.status === 'skipped') {
        throw conflict(`node ${nodeId} already ${run.status}`);
      }
      return [
        {
          type: 'NodeStarted',
          data: {
            executionId,
            nodeId,
            nodeName,
            nodeType,
            inputFrom,
            ...(loopItem === undefined ? {} : { loopItem }),
            attempt: state.attempt,
            startedAt: at,
            ...(iteration?.length ? { iteration } : {}),
          },
        },
      ];
    }
    case 'CompleteNode':
    case 'FailNode': {
      const { nodeId, iteration, start } = command.data;
      const status = state.nodeRuns.get(runKey(nodeId, iteration))?.status;
      // With its start carried, the node may begin and end here, as StartNode allows.
      if (start ? status === 'completed' || status === 'skipped' : status !== 'running') {
        throw conflict(start ? `node ${nodeId} already ${status}` : `node ${nodeId} is not running`);
      }
      const carried = start
        ? {
            nodeName: start.nodeName,
            nodeType: start.nodeType,
            inputFrom: start.inputFrom,
            attempt: state.attempt,
            startedAt: start.startedAt.toISOString(),
          }
        : {};
      const where = iteration?.length ? { iteration } : {};
      const durationMs = Math.max(0, Math.round(command.data.durationMs));
      return command.type === 'CompleteNode'
        ? [
            {
              type: 'NodeCompleted',
              data: {
                executionId,
                nodeId,
                ...carried,
                outputData: command.data.outputData,
                handles: command.data.handles,
                completedAt: at,
                durationMs,
                ...where,
                ...(command.data.tokenUsage ? { tokenUsage: command.data.tokenUsage } : {}),
              },
            },
          ]
        : [
            {
              type: 'NodeFailed',
              data: {
                executionId,
                nodeId,
                ...carried,
                error: command.data.error,
                completedAt: at,
                durationMs,
                ...where,
              },
            },
          ];
    }
    case 'SkipNode': {
      const { nodeId, iteration, nodeName, nodeType } = command.data;
      // Re-deciding a skip after a resume must not record it twice.
      if (state.nodeRuns.has(runKey(nodeId, iteration))) return [];
      return [
        {
          type: 'NodeSkipped',
          data: { executionId, nodeId, nodeName, nodeType, skippedAt: at, ...(iteration?.length ? { iteration } : {}) },
        },
      ];
    }
    case 'ScheduleRetry': {
      const failure = state.lastFailure;
      if (!failure) throw conflict('no failed node to retry');
      if (state.attempt > state.started.maxRetries) {
        throw conflict(`execution ${executionId} used all ${state.started.maxRetries} retries`);
      }
      return [
        {
          type: 'ExecutionRetryScheduled',
          data: {
            executionId,
            attempt: state.attempt + 1,
            failedNodeId: failure.nodeId,
            error: failure.error,
            retryAt: command.data.retryAt.toISOString(),
          },
        },
      ];
    }
    case 'CompleteExecution':
      return [
        {
          type: 'ExecutionCompleted',
          data: {
            executionId,
            outputData: command.data.outputData,
            completedAt: at,
            durationSeconds: secondsSince(state, now),
          },
        },
      ];
    case 'FailExecution':
      return [
        {
          type: 'ExecutionFailed',
          data: {
            executionId,
            errorMessage: command.data.errorMessage,
            failedNode: command.data.failedNode,
            attempt: state.attempt,
            completedAt: at,
            durationSeconds: secondsSince(state, now),
          },
        },
        ...errorWebhookScheduled(state, at),
      ];
    case 'TimeOutExecution':
      return [
        {
          type: 'ExecutionTimedOut',
          data: {
            executionId,
            errorMessage: `execution exceeded its timeout of ${state.started.timeoutSeconds} s`,
            completedAt: at,
            durationSeconds: secondsSince(state, now),
          },
        },
        ...errorWebhookScheduled(state, at),
      ];
    case 'CancelExecution':
      return [
        {
          type: 'ExecutionCancelled',
          data: {
            executionId,
            cancelledByUserId: command.data.cancelledByUserId,
            completedAt: at,
            durationSeconds: secondsSince(state, now),
          },
        },
      ];
    case 'ResumeExecution': {
      const runningNodeIds = [...state.nodeRuns].filter(([, run]) => run.status === 'running').map(([key]) => key);
      return [{ type: 'ExecutionResumed', data: { executionId, runningNodeIds, resumedAt: at } }];
    }
    case 'ParkExecution':
      return [
        { type: 'ExecutionParked', data: { executionId, parkedAt: at, dueAt: command.data.dueAt.toISOString() } },
      ];
    default: {
      const unknown: never = command;
      throw new Error(`unknown execution command ${JSON.stringify(unknown)}`);
    }
  }
}

/** An accepted execution still in the queue may only be cancelled, or failed when it could not be queued. */
function decideQueued(command: ExecutionCommand, state: ExecutionState, at: string): ExecutionEvent[] {
  const accepted = state.accepted;
  if (!accepted) throw notFound('execution not found');
  const executionId = accepted.executionId;
  if (isFinished(state)) throw conflict(`execution ${executionId} is already ${state.status}`);
  if (command.type === 'CancelExecution') {
    const { cancelledByUserId } = command.data;
    return [
      { type: 'ExecutionCancelled', data: { executionId, cancelledByUserId, completedAt: at, durationSeconds: 0 } },
    ];
  }
  if (command.type === 'FailExecution') {
    const { errorMessage, failedNode } = command.data;
    return [
      {
        type: 'ExecutionFailed',
        data: { executionId, errorMessage, failedNode, attempt: state.attempt, completedAt: at, durationSeconds: 0 },
      },
    ];
  }
  throw conflict(`execution ${executionId} has not started yet`);
}
