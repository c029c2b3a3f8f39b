import type { ExecutionEvent, ExecutionStartedData } from '../src/domain/execution/events.js';
import { graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';
import { foldExecution } from '../src/domain/execution/state.js';
import { given } from './support/decider-spec.js';

const T0 = '2026-01-01T10:00:00.000Z';
const at = (seconds: number) => ({ now: new Date(Date.parse(T0) + seconds * 1000) });
const iso = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

const graph = { nodes: [], edges: [] };
const startedData: ExecutionStartedData = {
  executionId: 'ex-1',
  processId: 'p-1',
  organizationId: 'o-1',
  processRevision: 3,
  triggerNodeId: 'in',
  inputData: { a: 1 },
  graphSnapshotId: graphSnapshotId(graph),
  triggeredByUserId: null,
  source: 'test',
  timeoutSeconds: 300,
  maxRetries: 1,
  errorWebhookUrl: null,
  startedAt: T0,
};
const started: ExecutionEvent = { type: 'ExecutionStarted', data: startedData };
const nodeStarted = (nodeId: string, seconds = 0): ExecutionEvent => ({
  type: 'NodeStarted',
  data: {
    executionId: 'ex-1',
    nodeId,
    nodeName: nodeId,
    nodeType: 'scriptNode',
    inputFrom: [],
    attempt: 1,
    startedAt: iso(seconds),
  },
});
const nodeFailed: ExecutionEvent = {
  type: 'NodeFailed',
  data: { executionId: 'ex-1', nodeId: 'n1', error: 'boom', completedAt: iso(1), durationMs: 1000 },
};

describe('execution decider', () => {
  test('StartExecution records the start with its time, naming its graph by id instead of carrying it', () => {
    const { startedAt: _ignored, graphSnapshotId: _named, ...data } = startedData;
    given([])
      .when({ type: 'StartExecution', data: { ...data, graphSnapshot: graph }, metadata: at(0) })
      .then([started]);
    expect(startedData.graphSnapshotId).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  test('a second StartExecution is a conflict', () => {
    const { startedAt: _ignored, graphSnapshotId: _named, ...start } = startedData;
    const data = { ...start, graphSnapshot: graph };
    given([started])
      .when({ type: 'StartExecution', data, metadata: at(0) })
      .thenRefuses(409, /already started/);
  });

  test('steps of an execution that never started are not found', () => {
    given([])
      .when({ type: 'CancelExecution', data: { cancelledByUserId: null }, metadata: at(1) })
      .thenRefuses(404);
  });

  test('a node completes only while running, with its duration', () => {
    given([started, nodeStarted('n1')])
      .when({
        type: 'CompleteNode',
        data: { nodeId: 'n1', outputData: { x: 1 }, handles: ['output'], durationMs: 12.4 },
        metadata: at(1),
      })
      .then([
        {
          type: 'NodeCompleted',
          data: {
            executionId: 'ex-1',
            nodeId: 'n1',
            outputData: { x: 1 },
            handles: ['output'],
            completedAt: iso(1),
            durationMs: 12,
          },
        },
      ]);
    given([started])
      .when({
        type: 'CompleteNode',
        data: { nodeId: 'n1', outputData: null, handles: [], durationMs: 1 },
        metadata: at(1),
      })
      .thenRefuses(409, /not running/);
  });

  test('a node that records no start of its own ends with one event carrying its start', () => {
    const start = {
      nodeName: 'Score',
      nodeType: 'scriptNode',
      inputFrom: [{ nodeId: 'in' }],
      startedAt: new Date(iso(1)),
    };
    const carried = {
      nodeName: 'Score',
      nodeType: 'scriptNode',
      inputFrom: [{ nodeId: 'in' }],
      attempt: 1,
      startedAt: iso(1),
    };
    const completedWithStart: ExecutionEvent = {
      type: 'NodeCompleted',
      data: {
        executionId: 'ex-1',
        nodeId: 'n1',
        ...carried,
        outputData: { x: 1 },
        handles: ['output'],
        completedAt: iso(2),
        durationMs: 1000,
      },
    };
    given([started])
      .when({
        type: 'CompleteNode',
        data: { nodeId: 'n1', outputData: { x: 1 }, handles: ['output'], durationMs: 1000, start },
        metadata: at(2),
      })
      .then([completedWithStart]);
    given([started])
      .when({ type: 'FailNode', data: { nodeId: 'n1', error: 'boom', durationMs: 1000, start }, metadata: at(2) })
      .then([
        {
          type: 'NodeFailed',
          data: { executionId: 'ex-1', nodeId: 'n1', ...carried, error: 'boom', completedAt: iso(2), durationMs: 1000 },
        },
      ]);
    // A completed run is not started again, with or without its start carried.
    given([started, completedWithStart])
      .when({
        type: 'CompleteNode',
        data: { nodeId: 'n1', outputData: null, handles: [], durationMs: 1, start },
        metadata: at(3),
      })
      .thenRefuses(409, /already completed/);
    // Folded, it is the same run as NodeStarted then NodeCompleted: completed, with its first start.
    const state = foldExecution([started, completedWithStart]);
    expect(state.nodeRuns.get('n1')).toMatchObject({
      status: 'completed',
      outputData: { x: 1 },
      handles: ['output'],
      firstStartedAt: iso(1),
    });
  });

  test('skipping a node twice records it once (resume)', () => {
    const skipped: ExecutionEvent = {
      type: 'NodeSkipped',
      data: { executionId: 'ex-1', nodeId: 'n2', nodeName: 'n2', nodeType: 'outputNode', skippedAt: iso(1) },
    };
    given([started])
      .when({ type: 'SkipNode', data: { nodeId: 'n2', nodeName: 'n2', nodeType: 'outputNode' }, metadata: at(1) })
      .then([skipped]);
    given([started, skipped])
      .when({ type: 'SkipNode', data: { nodeId: 'n2', nodeName: 'n2', nodeType: 'outputNode' }, metadata: at(2) })
      .then([]);
  });

  test('a retry is scheduled from the failed node while retries remain, then refused', () => {
    const retry: ExecutionEvent = {
      type: 'ExecutionRetryScheduled',
      data: { executionId: 'ex-1', attempt: 2, failedNodeId: 'n1', error: 'boom', retryAt: iso(5) },
    };
    given([started, nodeStarted('n1'), nodeFailed])
      .when({ type: 'ScheduleRetry', data: { retryAt: new Date(iso(5)) }, metadata: at(1) })
      .then([retry]);
    const secondFailure = { ...nodeFailed, data: { ...nodeFailed.data, completedAt: iso(6) } } as ExecutionEvent;
    given([started, nodeStarted('n1'), nodeFailed, retry, nodeStarted('n1', 5), secondFailure])
      .when({ type: 'ScheduleRetry', data: { retryAt: new Date(iso(9)) }, metadata: at(6) })
      .thenRefuses(409, /used all 1 retries/);
  });

  test('a retry keeps completed runs and forgets the failed one', () => {
    const completed: ExecutionEvent = {
      type: 'NodeCompleted',
      data: {
        executionId: 'ex-1',
        nodeId: 'in',
        outputData: { a: 1 },
        handles: ['output'],
        completedAt: iso(0),
        durationMs: 0,
      },
    };
    const state = foldExecution([
      started,
      nodeStarted('in'),
      completed,
      nodeStarted('n1'),
      nodeFailed,
      {
        type: 'ExecutionRetryScheduled',
        data: { executionId: 'ex-1', attempt: 2, failedNodeId: 'n1', error: 'boom', retryAt: iso(2) },
      },
    ]);
    expect(state.attempt).toBe(2);
    expect([...state.nodeRuns.keys()]).toEqual(['in']);
  });

  test('terminal events carry the duration; nothing happens after them', () => {
    given([started])
      .when({
        type: 'FailExecution',
        data: { errorMessage: 'boom', failedNode: { id: 'n1', name: 'n1', type: 'scriptNode', error: 'boom' } },
        metadata: at(2.5),
      })
      .then([
        {
          type: 'ExecutionFailed',
          data: {
            executionId: 'ex-1',
            errorMessage: 'boom',
            failedNode: { id: 'n1', name: 'n1', type: 'scriptNode', error: 'boom' },
            attempt: 1,
            completedAt: iso(2.5),
            durationSeconds: 2.5,
          },
        },
      ]);
    given([started])
      .when({ type: 'TimeOutExecution', data: {}, metadata: at(300) })
      .then([
        {
          type: 'ExecutionTimedOut',
          data: {
            executionId: 'ex-1',
            errorMessage: 'execution exceeded its timeout of 300 s',
            completedAt: iso(300),
            durationSeconds: 300,
          },
        },
      ]);
    const cancelled: ExecutionEvent = {
      type: 'ExecutionCancelled',
      data: { executionId: 'ex-1', cancelledByUserId: 'u-1', completedAt: iso(3), durationSeconds: 3 },
    };
    given([started])
      .when({ type: 'CancelExecution', data: { cancelledByUserId: 'u-1' }, metadata: at(3) })
      .then([cancelled]);
    given([started, cancelled])
      .when({ type: 'CompleteExecution', data: { outputData: {} }, metadata: at(4) })
      .thenRefuses(409, /already cancelled/);
  });
});
