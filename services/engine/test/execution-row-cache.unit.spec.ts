import { ExecutionRowCache } from '../src/projections/execution-row-cache.js';
import type { ExecutionRow, NodeStateRow } from '../src/projections/execution-rows.js';

/** Rows kept between group commits: valid only for the stream version they were stored at. */
describe('execution row cache', () => {
  const execution = (id: string, status = 'running'): ExecutionRow => ({
    id,
    process_id: 'p',
    organization_id: 'o',
    status,
    started_at: '2026-01-01T00:00:00.000Z',
    completed_at: null,
    duration_ms: null,
    error_message: null,
    triggered_by_user_id: null,
    trigger_node_id: 'in',
    attempt: 1,
    failed_node_id: null,
    failed_node_name: null,
    input_data: { big: 'input' },
    output_data: null,
    graph_snapshot: { nodes: [], edges: [] },
    graph_snapshot_id: null,
    input_ref: null,
    output_ref: null,
    queued: false,
  });
  const nodes = (executionId: string): Map<string, NodeStateRow> =>
    new Map([
      [
        'in',
        {
          execution_id: executionId,
          node_id: 'in',
          position: 0,
          node_name: 'In',
          node_type: 'inputNode',
          status: 'completed',
          started_at: null,
          completed_at: null,
          duration_ms: 1,
          input_data: { a: 1 },
          output_data: { a: 1 },
          error: null,
          iterations: null,
          input_from: { inputFrom: [] },
          output_ref: null,
          token_usage: null,
        },
      ],
    ]);

  test('hands rows back once, for the version they were stored at, without the large JSON columns', () => {
    const cache = new ExecutionRowCache();
    cache.put('ex', 3, execution('ex'), nodes('ex'));
    const taken = cache.take('ex', 3);
    expect(taken?.execution.status).toBe('running');
    expect(taken?.execution.input_data).toBeUndefined();
    expect(taken?.execution.graph_snapshot).toBeUndefined();
    expect(taken?.nodes.get('in')?.output_data).toBeUndefined();
    expect(taken?.nodes.get('in')?.input_from).toBeUndefined();
    expect(taken?.nodes.get('in')?.duration_ms).toBe(1);
    expect(cache.take('ex', 3)).toBeUndefined();
  });

  test('a version mismatch (another engine wrote) drops the entry', () => {
    const cache = new ExecutionRowCache();
    cache.put('ex', 3, execution('ex'), nodes('ex'));
    expect(cache.take('ex', 4)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  test('finished executions are not kept, and the oldest entries go beyond the limit', () => {
    const cache = new ExecutionRowCache(2);
    cache.put('done', 5, execution('done', 'completed'), nodes('done'));
    expect(cache.size).toBe(0);
    cache.put('a', 1, execution('a'), nodes('a'));
    cache.put('b', 1, execution('b'), nodes('b'));
    cache.put('c', 1, execution('c'), nodes('c'));
    expect(cache.size).toBe(2);
    expect(cache.take('a', 1)).toBeUndefined();
    expect(cache.take('c', 1)?.execution.id).toBe('c');
  });

  test('remembers stored graph snapshots up to its limit, the least recently used going first', () => {
    const cache = new ExecutionRowCache(10, 2);
    const graph = (id: string) => ({ nodes: [{ id }], edges: [] });
    expect(cache.graphSnapshot('g1')).toBeUndefined();
    cache.rememberGraphSnapshot('g1', graph('1'));
    cache.rememberGraphSnapshot('g2', graph('2'));
    expect(cache.graphSnapshot('g1')).toEqual(graph('1'));
    cache.rememberGraphSnapshot('g3', graph('3'));
    expect(cache.graphSnapshot('g2')).toBeUndefined();
    expect(cache.graphSnapshot('g1')).toEqual(graph('1'));
    expect(cache.graphSnapshot('g3')).toEqual(graph('3'));
    cache.clear();
    expect(cache.graphSnapshot('g1')).toBeUndefined();
  });

  test('keeps graph snapshots within its byte budget too, the least recently used going first', () => {
    const graph = (id: string) => ({ nodes: [{ id, code: 'x'.repeat(1000) }], edges: [] });
    const cache = new ExecutionRowCache(10, 100, 2500);
    cache.rememberGraphSnapshot('g1', graph('1'));
    cache.rememberGraphSnapshot('g2', graph('2'));
    cache.rememberGraphSnapshot('g3', graph('3'));
    expect(cache.graphSnapshot('g1')).toBeUndefined();
    expect(cache.graphSnapshot('g2')).toEqual(graph('2'));
    expect(cache.graphSnapshot('g3')).toEqual(graph('3'));
    // One larger than the whole budget is not kept (a start of it reads it back).
    cache.rememberGraphSnapshot('huge', { nodes: [{ code: 'x'.repeat(3000) }], edges: [] });
    expect(cache.graphSnapshot('huge')).toBeUndefined();
    expect(cache.graphSnapshot('g3')).toEqual(graph('3'));
  });
});
