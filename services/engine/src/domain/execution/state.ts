import type { ExecutionStatus, IterationPath } from '@weft/contracts';
import type { ExecutionAcceptedData, ExecutionEvent, ExecutionStartedData } from './events.js';

/**
 * What the engine needs to know about an execution to decide its next step or resume it:
 * folded from its events by `evolve`.
 */
export interface NodeRun {
  nodeId: string;
  iteration: IterationPath;
  status: 'running' | 'completed' | 'failed' | 'skipped';
  outputData: unknown;
  handles: string[];
  firstStartedAt: string | null;
  error: string | null;
}

export interface ExecutionState {
  status: 'not_started' | ExecutionStatus;
  /** Set when the request was accepted before it was queued (it may be cancelled while queued). */
  accepted: ExecutionAcceptedData | null;
  started: ExecutionStartedData | null;
  attempt: number;
  /** Keyed by node run key (node id, prefixed by loop iterations). */
  nodeRuns: Map<string, NodeRun>;
  lastFailure: { nodeId: string; error: string } | null;
  /** Resumes since the execution last made progress (a node finished, a retry, a park). */
  resumesWithoutProgress: number;
  /** When the scheduled retry may start; null once a node of it started. */
  retryAt: string | null;
  /** Error webhook POSTs made so far. */
  errorWebhookAttempts: number;
}

export const initialExecutionState = (): ExecutionState => ({
  status: 'not_started',
  accepted: null,
  started: null,
  attempt: 1,
  nodeRuns: new Map(),
  lastFailure: null,
  resumesWithoutProgress: 0,
  retryAt: null,
  errorWebhookAttempts: 0,
});

export const isFinished = (state: ExecutionState): boolean =>
  state.status !== 'not_started' && state.status !== 'running';

/** Same key as the graph runner's `nodeRunKey`, so resumed runs find their seeds. */
export const runKey = (nodeId: string, iteration: IterationPath = []): string =>
  iteration.length === 0 ? nodeId : `${iteration.map((i) => `${i.loopNodeId}#${i.index}`).join('/')}/${nodeId}`;

/** A node run begins (NodeStarted, or the start a NodeCompleted or NodeFailed carries). */
function startRun(
  state: ExecutionState,
  nodeId: string,
  iteration: IterationPath | undefined,
  startedAt: string,
): void {
  const key = runKey(nodeId, iteration);
  const previous = state.nodeRuns.get(key);
  state.retryAt = null;
  state.nodeRuns.set(key, {
    nodeId,
    iteration: iteration ?? [],
    status: 'running',
    outputData: null,
    handles: [],
    firstStartedAt: previous?.firstStartedAt ?? startedAt,
    error: null,
  });
}

/** Mutates and returns `state`: the engine folds thousands of node events, copying would be quadratic. */
export function evolve(state: ExecutionState, event: ExecutionEvent): ExecutionState {
  switch (event.type) {
    case 'ExecutionAccepted':
      state.accepted = event.data;
      return state;
    case 'ExecutionStarted':
      state.status = 'running';
      state.started = event.data;
      return state;
    case 'NodeStarted':
      startRun(state, event.data.nodeId, event.data.iteration, event.data.startedAt);
      return state;
    case 'NodeCompleted': {
      if (event.data.startedAt !== undefined)
        startRun(state, event.data.nodeId, event.data.iteration, event.data.startedAt);
      const run = state.nodeRuns.get(runKey(event.data.nodeId, event.data.iteration));
      if (run) {
        run.status = 'completed';
        run.outputData = event.data.outputData;
        run.handles = event.data.handles;
      }
      state.resumesWithoutProgress = 0;
      return state;
    }
    case 'NodeFailed': {
      if (event.data.startedAt !== undefined)
        startRun(state, event.data.nodeId, event.data.iteration, event.data.startedAt);
      const run = state.nodeRuns.get(runKey(event.data.nodeId, event.data.iteration));
      if (run) {
        run.status = 'failed';
        run.error = event.data.error;
      }
      state.lastFailure ??= { nodeId: event.data.nodeId, error: event.data.error };
      state.resumesWithoutProgress = 0;
      return state;
    }
    case 'NodeSkipped':
      state.nodeRuns.set(runKey(event.data.nodeId, event.data.iteration), {
        nodeId: event.data.nodeId,
        iteration: event.data.iteration ?? [],
        status: 'skipped',
        outputData: null,
        handles: [],
        firstStartedAt: null,
        error: null,
      });
      return state;
    case 'ExecutionRetryScheduled':
      state.attempt = event.data.attempt;
      state.lastFailure = null;
      state.retryAt = event.data.retryAt;
      state.resumesWithoutProgress = 0;
      // Runs that did not complete start over; completed ones are kept as the retry's seeds.
      for (const [key, run] of state.nodeRuns) if (run.status !== 'completed') state.nodeRuns.delete(key);
      return state;
    case 'ExecutionCompleted':
      state.status = 'completed';
      return state;
    case 'ExecutionFailed':
      state.status = 'failed';
      return state;
    case 'ExecutionTimedOut':
      state.status = 'timeout';
      return state;
    case 'ExecutionCancelled':
      state.status = 'cancelled';
      return state;
    case 'ExecutionResumed':
      state.resumesWithoutProgress++;
      return state;
    case 'ExecutionParked':
      state.resumesWithoutProgress = 0;
      return state;
    case 'ErrorWebhookDeliveryScheduled':
      return state;
    case 'ErrorWebhookDeliveryAttempted':
      state.errorWebhookAttempts = event.data.attempt;
      return state;
    default: {
      const unknown: never = event;
      throw new Error(`unknown execution event ${JSON.stringify(unknown)}`);
    }
  }
}

export const foldExecution = (events: readonly ExecutionEvent[]): ExecutionState =>
  events.reduce(evolve, initialExecutionState());
