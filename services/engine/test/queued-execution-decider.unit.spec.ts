import type { ExecutionEvent } from '../src/domain/execution/events.js';
import { applyToRows, emptyRowSet } from '../src/projections/execution-rows.js';
import { graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';
import { given } from './support/decider-spec.js';

const T0 = '2026-01-01T10:00:00.000Z';
const at = (seconds: number) => ({ now: new Date(Date.parse(T0) + seconds * 1000) });
const iso = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

const acceptedData = {
  executionId: 'ex-1',
  processId: 'p-1',
  organizationId: 'o-1',
  triggerNodeId: 'in',
  triggeredByUserId: null,
  source: 'webhook',
};
const accepted: ExecutionEvent = { type: 'ExecutionAccepted', data: { ...acceptedData, acceptedAt: T0 } };
const graph = {
  nodes: [{ id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In' } }],
  edges: [],
};
const startData = {
  ...acceptedData,
  processRevision: 1,
  inputData: { a: 1 },
  timeoutSeconds: 300,
  maxRetries: 0,
  errorWebhookUrl: null,
};
/** The StartExecution command's data: the graph itself. */
const startCommandData = { ...startData, graphSnapshot: graph };
/** ExecutionStarted's data: the graph by id (and, as the read model's fold gets it, the graph itself). */
const startedData = { ...startData, graphSnapshotId: graphSnapshotId(graph) };

/** An accepted execution waits in the queue: it may be cancelled (or failed) there, and then never starts. */
describe('execution decider: accepted, still queued', () => {
  test('AcceptExecution records the acceptance once', () => {
    given([])
      .when({ type: 'AcceptExecution', data: acceptedData, metadata: at(0) })
      .then([accepted]);
    given([accepted])
      .when({ type: 'AcceptExecution', data: acceptedData, metadata: at(1) })
      .thenRefuses(409, /already accepted/);
  });

  test('a cancel while queued ends it with no duration, and its start is then refused', () => {
    given([accepted])
      .when({ type: 'CancelExecution', data: { cancelledByUserId: 'u' }, metadata: at(2) })
      .then([
        {
          type: 'ExecutionCancelled',
          data: { executionId: 'ex-1', cancelledByUserId: 'u', completedAt: iso(2), durationSeconds: 0 },
        },
      ]);
    const cancelled: ExecutionEvent = {
      type: 'ExecutionCancelled',
      data: { executionId: 'ex-1', cancelledByUserId: 'u', completedAt: iso(2), durationSeconds: 0 },
    };
    given([accepted, cancelled])
      .when({ type: 'StartExecution', data: startCommandData, metadata: at(3) })
      .thenRefuses(409, /already started/);
  });

  test('the start follows the acceptance; node steps before it are refused', () => {
    given([accepted])
      .when({ type: 'StartExecution', data: startCommandData, metadata: at(1) })
      .then([{ type: 'ExecutionStarted', data: { ...startedData, startedAt: iso(1) } }]);
    given([accepted])
      .when({ type: 'ResumeExecution', data: {}, metadata: at(1) })
      .thenRefuses(409, /has not started yet/);
  });
});

describe('execution rows: accepted, then started', () => {
  test('the accepted row reads running and queued, counted once; the start fills it in', () => {
    const rows = emptyRowSet();
    applyToRows(rows, accepted);
    expect(rows.executions.get('ex-1')).toMatchObject({ status: 'running', queued: true, started_at: T0 });
    applyToRows(rows, { type: 'ExecutionStarted', data: { ...startedData, graphSnapshot: graph, startedAt: iso(1) } });
    expect(rows.executions.get('ex-1')).toMatchObject({
      status: 'running',
      queued: false,
      started_at: iso(1),
      input_data: { a: 1 },
    });
    expect([...(rows.nodes.get('ex-1')?.keys() ?? [])]).toEqual(['in']);
    expect(rows.countDeltas.get('p-1\u0000running')).toBe(1);
  });
});
