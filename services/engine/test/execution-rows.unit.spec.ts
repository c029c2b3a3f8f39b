import type { ExecutionEvent } from '../src/domain/execution/events.js';
import { applyToRows, emptyRowSet } from '../src/projections/execution-rows.js';

/** The read-model fold the projection writes: one event at a time over the rows of a batch. */
describe('execution read-model rows', () => {
  const T = '2026-01-01T00:00:00.000Z';
  const started: ExecutionEvent = {
    type: 'ExecutionStarted',
    data: {
      executionId: 'ex',
      processId: 'p',
      organizationId: 'o',
      processRevision: 1,
      triggerNodeId: 'in',
      inputData: { a: 1 },
      graphSnapshotId: 'graph-id',
      graphSnapshot: {
        nodes: [
          { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In' } },
          { id: 'body', type: 'scriptNode', position: { x: 0, y: 0 }, config: { label: 'Body' } },
          { id: 'slow', type: 'waitNode', position: { x: 0, y: 0 }, config: { label: 'Slow' } },
        ],
        edges: [],
      },
      triggeredByUserId: null,
      source: 'test',
      timeoutSeconds: 300,
      maxRetries: 0,
      errorWebhookUrl: null,
      startedAt: T,
    },
  };
  const nodeStarted = (nodeId: string, index?: number): ExecutionEvent => ({
    type: 'NodeStarted',
    data: {
      executionId: 'ex',
      nodeId,
      nodeName: nodeId,
      nodeType: 'scriptNode',
      inputFrom: [],
      attempt: 1,
      startedAt: T,
      ...(index === undefined ? {} : { iteration: [{ loopNodeId: 'loop', index }] }),
    },
  });

  test('loop iterations count runs; a skip in one iteration keeps the other runs; the end cancels running nodes', () => {
    const rows = emptyRowSet();
    for (const event of [
      started,
      nodeStarted('body', 0),
      {
        type: 'NodeCompleted',
        data: {
          executionId: 'ex',
          nodeId: 'body',
          outputData: 1,
          handles: ['output'],
          completedAt: T,
          durationMs: 1,
          iteration: [{ loopNodeId: 'loop', index: 0 }],
        },
      },
      nodeStarted('body', 1),
      {
        type: 'NodeCompleted',
        data: {
          executionId: 'ex',
          nodeId: 'body',
          outputData: 4,
          handles: ['output'],
          completedAt: T,
          durationMs: 1,
          iteration: [{ loopNodeId: 'loop', index: 1 }],
        },
      },
      {
        type: 'NodeSkipped',
        data: {
          executionId: 'ex',
          nodeId: 'body',
          nodeName: 'Body',
          nodeType: 'scriptNode',
          skippedAt: T,
          iteration: [{ loopNodeId: 'loop', index: 2 }],
        },
      },
      nodeStarted('slow'),
      {
        type: 'ExecutionTimedOut',
        data: { executionId: 'ex', errorMessage: 'too slow', completedAt: T, durationSeconds: 300 },
      },
    ] as ExecutionEvent[]) {
      applyToRows(rows, event);
    }
    const nodes = rows.nodes.get('ex')!;
    expect(nodes.get('body')).toMatchObject({ status: 'completed', iterations: 2, output_data: 4 });
    expect(nodes.get('slow')?.status).toBe('cancelled');
    expect(nodes.get('in')?.status).toBe('pending');
    expect(rows.executions.get('ex')).toMatchObject({
      status: 'timeout',
      error_message: 'too slow',
      duration_ms: 300000,
    });
    expect(Object.fromEntries(rows.countDeltas)).toEqual({ 'p\u0000running': 0, 'p\u0000timeout': 1 });
  });

  test('an end carrying its start gives the node row that NodeStarted then the end give', () => {
    const start = { nodeName: 'Body', nodeType: 'scriptNode', inputFrom: [{ nodeId: 'in' }], attempt: 1 };
    const T1 = '2026-01-01T00:00:01.000Z';
    const ends: ExecutionEvent[] = [
      {
        type: 'NodeCompleted',
        data: {
          executionId: 'ex',
          nodeId: 'body',
          outputData: 3,
          handles: ['output'],
          completedAt: T1,
          durationMs: 1000,
        },
      },
      {
        type: 'NodeFailed',
        data: { executionId: 'ex', nodeId: 'body', error: 'boom', completedAt: T1, durationMs: 1000 },
      },
    ];
    for (const end of ends) {
      const twoEvents = emptyRowSet();
      applyToRows(twoEvents, started);
      applyToRows(twoEvents, {
        type: 'NodeStarted',
        data: { executionId: 'ex', nodeId: 'body', ...start, startedAt: T },
      });
      applyToRows(twoEvents, end);
      const oneEvent = emptyRowSet();
      applyToRows(oneEvent, started);
      applyToRows(oneEvent, { ...end, data: { ...end.data, ...start, startedAt: T } } as ExecutionEvent);
      const row = oneEvent.nodes.get('ex')?.get('body');
      expect(row).toEqual(twoEvents.nodes.get('ex')?.get('body'));
      expect(row).toMatchObject({
        status: end.type === 'NodeCompleted' ? 'completed' : 'failed',
        started_at: T,
        completed_at: T1,
        input_from: { inputFrom: [{ nodeId: 'in' }] },
      });
    }
  });

  test('a terminal event on a finished execution changes nothing', () => {
    const rows = emptyRowSet();
    applyToRows(rows, started);
    applyToRows(rows, {
      type: 'ExecutionCancelled',
      data: { executionId: 'ex', cancelledByUserId: 'u', completedAt: T, durationSeconds: 1 },
    });
    applyToRows(rows, {
      type: 'ExecutionCompleted',
      data: { executionId: 'ex', outputData: {}, completedAt: T, durationSeconds: 2 },
    });
    expect(rows.executions.get('ex')).toMatchObject({ status: 'cancelled', duration_ms: 1000 });
  });
});
