import { EventTooLargeError } from '../src/application/event-values.js';
import { graphSnapshotAppend, GraphSnapshotRecords } from '../src/application/graph-snapshot-records.js';
import { deepFreeze } from '../src/domain/graph/deep-freeze.js';
import { snapshotOf } from '../src/domain/graph/execution-graph.js';
import { canonicalJson, graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';

/**
 * What is computed once per graph (the snapshot of a process revision, its stored id, its size)
 * is kept only for values frozen all the way down: anything else may change after, and a kept
 * id or size would then name or measure another graph than the one stored.
 */
describe('graph snapshot memos keep only what cannot change', () => {
  const process = (code: string) => ({
    nodes: [{ id: 'a', type: 'scriptNode', position: { x: 0, y: 0 }, config: { code } as Record<string, unknown> }],
    edges: [],
  });

  test('an unfrozen snapshot changed after its id was taken gets the id of what it holds now', () => {
    const snapshot = { nodes: [{ id: 'a', type: 'scriptNode', config: { code: 'return 1' } }], edges: [] };
    const before = graphSnapshotId(snapshot);
    snapshot.nodes[0]!.config.code = 'return 2';
    expect(graphSnapshotId(snapshot)).toBe(graphSnapshotId(JSON.parse(JSON.stringify(snapshot)) as object));
    expect(graphSnapshotId(snapshot)).not.toBe(before);
  });

  test('a record frozen only at its top gets a fresh snapshot each time, so a changed config shows', () => {
    const record = Object.freeze(process('return 1'));
    const id = graphSnapshotId(snapshotOf(record));
    record.nodes[0]!.config.code = 'return 2'; // allowed: only the top is frozen
    const again = snapshotOf(record);
    expect(canonicalJson(again)).toContain('return 2');
    expect(graphSnapshotId(again)).not.toBe(id);
  });

  test("a deep-frozen record (the engine's copy of a revision) gets one deep-frozen snapshot", () => {
    const record = deepFreeze(process('return 1'));
    const snapshot = snapshotOf(record);
    expect(snapshotOf(record)).toBe(snapshot);
    expect(Object.isFrozen(snapshot.nodes[0])).toBe(true);
    expect(() => {
      (snapshot.nodes as unknown[]).push({});
    }).toThrow(TypeError);
  });

  test('deepFreeze goes below what was frozen at its top only', () => {
    const inner = Object.freeze({ config: { code: 'x' } });
    const record = deepFreeze({ nodes: [inner] });
    expect(Object.isFrozen(record.nodes[0]!.config)).toBe(true);
  });

  const start = { processId: 'p', organizationId: 'o', processRevision: 1 };

  test('a snapshot frozen only at its top is measured at every recording: the event limit holds', () => {
    const snapshot = Object.freeze({
      nodes: [{ id: 'a', type: 'scriptNode', position: { x: 0, y: 0 }, config: { code: 'x' } }],
      edges: [],
    });
    expect(graphSnapshotAppend(start, snapshot, {}, 4096).events).toHaveLength(1);
    snapshot.nodes[0]!.config.code = 'x'.repeat(10_000);
    expect(() => graphSnapshotAppend(start, snapshot, {}, 4096)).toThrow(EventTooLargeError);
  });

  test('a deep-frozen snapshot is measured once and still counts against the event limit', () => {
    const big = deepFreeze({
      nodes: [{ id: 'a', type: 'scriptNode', position: { x: 0, y: 0 }, config: { code: 'x'.repeat(10_000) } }],
      edges: [],
    });
    expect(() => graphSnapshotAppend(start, big, {}, 4096)).toThrow(/GraphSnapshotRecorded event of \d+ bytes/);
    expect(() => new GraphSnapshotRecords(undefined, 4096).recordingFor(start, big, {})).toThrow(EventTooLargeError);
  });
});
