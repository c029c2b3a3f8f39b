import { executionEventSchemas, validateAgainst } from '@weft/contracts';
import type { StreamAppend } from '@weft/event-store';
import { ExecutionEventWriter } from '../src/application/execution-event-writer.js';
import { GraphSnapshotRecords } from '../src/application/graph-snapshot-records.js';
import { deepFreeze } from '../src/domain/graph/deep-freeze.js';

const graph = (code: string) =>
  deepFreeze({
    nodes: [{ id: 'a', type: 'scriptNode', position: { x: 0, y: 0 }, config: { code } }],
    edges: [],
  });
const start = (processId: string) => ({ processId, organizationId: 'o', processRevision: 1 });

/** A graph is recorded with the start that needs it, until a commit of it succeeded; then never again. */
describe('graph recordings', () => {
  test('a graph is remembered only once the commit that recorded it succeeded, per process', () => {
    const records = new GraphSnapshotRecords();
    const first = records.recordingFor(start('p'), graph('x'), {});
    expect(first?.append).toMatchObject({ expectedVersion: 'any', events: [{ type: 'GraphSnapshotRecorded' }] });
    // Not committed yet: the next start carries the recording too (a failed commit recorded nothing).
    expect(records.recordingFor(start('p'), graph('x'), {})).toBeDefined();
    first!.committed();
    expect(records.recordingFor(start('p'), graph('x'), {})).toBeUndefined();
    // The same graph in another process is that process's own stream, recorded on its own.
    expect(records.recordingFor(start('q'), graph('x'), {})?.append.streamId).toMatch(/^execution-graph-q-/);
    expect(records.recordingFor(start('p'), graph('y'), {})).toBeDefined();
  });

  test('remembers at most its limit, the least recently used going first', () => {
    const records = new GraphSnapshotRecords(undefined, 1_000_000, 2);
    for (const code of ['1', '2']) records.recordingFor(start('p'), graph(code), {})!.committed();
    expect(records.recordingFor(start('p'), graph('1'), {})).toBeUndefined(); // 1 is now the most recent
    records.recordingFor(start('p'), graph('3'), {})!.committed();
    expect(records.recordingFor(start('p'), graph('2'), {})).toBeDefined();
    expect(records.recordingFor(start('p'), graph('1'), {})).toBeUndefined();
  });
});

describe('the writer commits `before` with its append', () => {
  const append = (streamId: string) => [{ type: 'E', data: { streamId } }];
  const recording = (graphStream: string): StreamAppend => ({
    streamId: graphStream,
    events: [{ type: 'GraphSnapshotRecorded', data: {} }],
    expectedVersion: 'any',
  });

  test('ahead of it, once per stream in a commit', async () => {
    const commits: StreamAppend[][] = [];
    const writer = new ExecutionEventWriter(async (batch) => void commits.push([...batch]));
    await Promise.all([
      writer.append('execution-1', append('1'), 'no_stream', { before: recording('graph-g') }),
      writer.append('execution-2', append('2'), 'no_stream', { before: recording('graph-g') }),
      writer.append('execution-3', append('3'), 'no_stream', { before: recording('graph-h') }),
    ]);
    expect(commits.map((batch) => batch.map((item) => item.streamId))).toEqual([
      ['graph-g', 'execution-1', 'execution-2', 'graph-h', 'execution-3'],
    ]);
  });

  test('in every retry of its stream, so no start commits without its graph', async () => {
    const commits: string[][] = [];
    const writer = new ExecutionEventWriter(async (batch) => {
      commits.push(batch.map((item) => item.streamId));
      // The whole batch fails once (another stream's fault): each stream is retried on its own.
      if (commits.length === 1) throw new Error('could not serialize access');
    });
    await Promise.all([
      writer.append('execution-1', append('1'), 'no_stream', { before: recording('graph-g') }),
      writer.append('execution-2', append('2'), 'no_stream'),
    ]);
    expect(commits).toEqual([['graph-g', 'execution-1', 'execution-2'], ['graph-g', 'execution-1'], ['execution-2']]);
  });
});

describe("ExecutionStarted's published schema (version 3)", () => {
  const base = {
    executionId: 'e',
    processId: 'p',
    organizationId: 'o',
    triggerNodeId: 'in',
    inputData: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    timeoutSeconds: 300,
  };
  const { schemaVersion, schema } = executionEventSchemas.ExecutionStarted;

  test('takes a start that names its graph and one stored earlier that carries it; not one with neither', () => {
    expect(schemaVersion).toBe(3);
    expect(validateAgainst(schema, { ...base, graphSnapshotId: 'g' })).toEqual([]);
    expect(validateAgainst(schema, { ...base, graphSnapshot: { nodes: [], edges: [] } })).toEqual([]);
    expect(validateAgainst(schema, base)).not.toEqual([]);
    expect(validateAgainst(executionEventSchemas.GraphSnapshotRecorded.schema, { graphSnapshotId: 'g' })).not.toEqual(
      [],
    );
  });
});
