import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalDiskBlobStorage } from '@weft/blob-storage';
import { executionEventSchemas, validateAgainst } from '@weft/contracts';
import { WrongExpectedVersionError, type StreamAppend } from '@weft/event-store';
import { blobValueStore } from '../src/adapters/blob-value-store.js';
import { ExecutionEventWriter } from '../src/application/execution-event-writer.js';
import { ExecutionRun } from '../src/application/execution-run.js';
import { GraphSnapshotRecords } from '../src/application/graph-snapshot-records.js';
import { initialExecutionState } from '../src/domain/execution/state.js';
import { deepFreeze } from '../src/domain/graph/deep-freeze.js';
import { startCommand } from './support/start-command.js';

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
    expect(first?.append).toMatchObject({ expectedVersion: 'no_stream', events: [{ type: 'GraphSnapshotRecorded' }] });
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
    expectedVersion: 'no_stream',
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

  test('left out, and the commit made again, when its stream exists already (recorded by another commit)', async () => {
    const commits: string[][] = [];
    const writer = new ExecutionEventWriter(async (batch) => {
      commits.push(batch.map((item) => item.streamId));
      if (batch.some((item) => item.streamId === 'graph-g'))
        throw new WrongExpectedVersionError('graph-g', 'no_stream', 1);
    });
    await Promise.all([
      writer.append('execution-1', append('1'), 'no_stream', { before: recording('graph-g') }),
      writer.append('execution-2', append('2'), 'no_stream', { before: recording('graph-h') }),
    ]);
    expect(commits).toEqual([
      ['graph-g', 'execution-1', 'graph-h', 'execution-2'],
      ['execution-1', 'graph-h', 'execution-2'],
    ]);
  });

  test('kept when the conflict does not show its stream exists (a unique violation pinned on the first stream)', async () => {
    const commits: string[][] = [];
    const writer = new ExecutionEventWriter(async (batch) => {
      commits.push(batch.map((item) => item.streamId));
      throw new WrongExpectedVersionError('graph-g', 'no_stream', -1);
    });
    await expect(
      writer.append('execution-1', append('1'), 'no_stream', { before: recording('graph-g') }),
    ).rejects.toBeInstanceOf(WrongExpectedVersionError);
    expect(commits.every((streams) => streams[0] === 'graph-g')).toBe(true);
  });

  test("a conflict on the start's own stream still fails it", async () => {
    const writer = new ExecutionEventWriter(async (batch) => {
      if (batch.some((item) => item.streamId === 'execution-1'))
        throw new WrongExpectedVersionError('execution-1', 'no_stream', 3);
    });
    await expect(
      writer.append('execution-1', append('1'), 'no_stream', { before: recording('graph-g') }),
    ).rejects.toBeInstanceOf(WrongExpectedVersionError);
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

describe('a start refused for its graph', () => {
  let dir: string;
  let storage: LocalDiskBlobStorage;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-graph-refused-'));
    storage = new LocalDiskBlobStorage(dir);
  });
  afterEach(async () => {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('leaves no blob of its input behind (the graph is measured before any value is stored)', async () => {
    const limits = { maxEventBytes: 8192, valueInlineMaxBytes: 1024 };
    const run = new ExecutionRun(
      crypto.randomUUID(),
      initialExecutionState(),
      0,
      {},
      new ExecutionEventWriter(async () => undefined),
      () => new Date(),
      () => undefined,
      { limits, values: blobValueStore(storage), graphs: new GraphSnapshotRecords(undefined, limits.maxEventBytes) },
    );
    const start = startCommand({
      triggerNodeId: 'a',
      // Over the inline limit: it would go to blob storage.
      inputData: { big: 'i'.repeat(2000) },
      graphSnapshot: graph('x'.repeat(10_000)),
    });
    expect(() => run.execute(start)).toThrow(/GraphSnapshotRecorded event of \d+ bytes/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await readdir(dir, { recursive: true })).toEqual([]);
  });
});
