import type { ExecutionEvent } from '../src/domain/execution/events.js';
import { ScriptSandbox, ScriptError } from '../src/adapters/nodes/script-sandbox.js';
import { ExecutionRowCache } from '../src/projections/execution-row-cache.js';
import { applyToRows, emptyRowSet } from '../src/projections/execution-rows.js';
import { recordOfFinishedRows } from '../src/projections/execution-queries.js';
import { RecentlyFinishedRows } from '../src/projections/recently-finished-rows.js';

/** The rows handed to a synchronous caller leave the events they came from untouched; a script run's abort reasons never escape as errors. */
const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
};

describe('rows handed to the synchronous caller', () => {
  const T = '2026-01-01T00:00:00.000Z';
  const events = (): ExecutionEvent[] => [
    {
      type: 'ExecutionStarted',
      data: {
        executionId: 'ex',
        processId: 'p',
        organizationId: 'o',
        processRevision: 1,
        triggerNodeId: 'in',
        inputData: { a: { deep: [1, { x: 2 }] } },
        graphSnapshotId: 'graph-id',
        graphSnapshot: {
          nodes: [
            { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In' } },
            { id: 'b', type: 'scriptNode', position: { x: 0, y: 0 }, config: { label: 'B' } },
            { id: 'c', type: 'scriptNode', position: { x: 0, y: 0 }, config: { label: 'C' } },
            { id: 'out', type: 'outputNode', position: { x: 0, y: 0 }, config: { label: 'Out' } },
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
    },
    ...(['in', 'b', 'c', 'out'] as const).flatMap((nodeId, i): ExecutionEvent[] => [
      {
        type: 'NodeStarted',
        data: {
          executionId: 'ex',
          nodeId,
          nodeName: nodeId,
          nodeType: 'scriptNode',
          inputFrom: nodeId === 'in' ? [] : nodeId === 'out' ? [{ nodeId: 'b' }, { nodeId: 'c' }] : [{ nodeId: 'in' }],
          attempt: 1,
          startedAt: T,
        },
      },
      {
        type: 'NodeCompleted',
        data: {
          executionId: 'ex',
          nodeId,
          outputData: { n: i, shared: { list: [i, { y: i }] } },
          handles: ['output'],
          completedAt: T,
          durationMs: 1,
          tokenUsage: undefined,
        },
      },
    ]),
    {
      type: 'ExecutionCompleted',
      data: { executionId: 'ex', outputData: { Out: { z: 1 } }, completedAt: T, durationSeconds: 0.002 },
    },
  ];

  test('building the answer (twice) and the cache put mutate no object the events hold', async () => {
    const evs = deepFreeze(events());
    const snapshot = JSON.stringify(evs);
    const rows = emptyRowSet();
    for (const event of evs) applyToRows(rows, event);
    const finished = new RecentlyFinishedRows();
    const execution = rows.executions.get('ex')!;
    const nodes = rows.nodes.get('ex')!;
    // As afterCommit does: finished first, then the row cache (a completed row: nothing cleared).
    finished.put('ex', { execution, nodes: [...nodes.values()] });
    new ExecutionRowCache().put('ex', evs.length, execution, nodes);
    const taken = finished.take('ex')!;
    const first = await recordOfFinishedRows(taken);
    const second = await recordOfFinishedRows(taken);
    expect(second).toEqual(first);
    expect(first.output_data).toEqual({ Out: { z: 1 } });
    expect(first.node_states.map((s) => s.node_name)).toEqual(['In', 'B', 'C', 'Out']);
    expect(first.node_states[3]!.input_data).toMatchObject({ B: { n: 1 }, C: { n: 2 } });
    expect(JSON.stringify(evs)).toBe(snapshot);
  });
});

describe('symbol abort reasons of the script sandbox', () => {
  const sandboxes: ScriptSandbox[] = [];
  afterEach(() => {
    for (const sandbox of sandboxes.splice(0)) sandbox.dispose();
  });

  test('runs that settle while waiting for their turn (cancel, timeout, dispose) end with ScriptErrors, no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const sandbox = new ScriptSandbox({ isolates: { runsPerIsolate: 1 } });
      sandboxes.push(sandbox);
      const run = (code: string, timeoutMs: number, signal?: AbortSignal) =>
        sandbox.run({ organizationId: 'o', code, input: {}, timeoutMs, memoryMb: 16, signal }).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      const busy = run('const end = Date.now() + 400; while (Date.now() < end) {} return 1;', 5000);
      const cancel = new AbortController();
      const cancelled = run('return 2;', 5000, cancel.signal);
      const timedOut = run('return 3;', 50);
      const waiting = run('return 4;', 5000);
      cancel.abort(Symbol('caller reason'));
      const results = await Promise.all([busy, cancelled, timedOut, waiting]);
      expect(results[0]).toEqual({ value: 1 });
      for (const result of [results[1], results[2]]) {
        const error = (result as { error: unknown }).error;
        expect(error).toBeInstanceOf(ScriptError);
        expect(typeof (error as Error).message).toBe('string');
        expect(() => `${(error as Error).message}`).not.toThrow();
      }
      expect(results[3]).toEqual({ value: 4 });
      // dispose while one waits for its turn
      const blocking = run('const end = Date.now() + 300; while (Date.now() < end) {} return 5;', 5000);
      const left = run('return 6;', 5000);
      await new Promise((resolve) => setTimeout(resolve, 20));
      sandbox.dispose();
      const [, leftResult] = await Promise.all([blocking, left]);
      expect((leftResult as { error?: unknown }).error).toBeInstanceOf(Error);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
