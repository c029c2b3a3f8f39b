import { canonicalJson, graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';

describe('graph snapshot ids', () => {
  test('the same graph with its keys in another order (as jsonb gives it back) has the same id', () => {
    const asRun = { nodes: [{ id: 'a', type: 'inputNode', config: { label: 'A', x: 1 } }], edges: [] };
    const asRead = { edges: [], nodes: [{ config: { x: 1, label: 'A' }, type: 'inputNode', id: 'a' }] };
    expect(graphSnapshotId(asRead)).toBe(graphSnapshotId(asRun));
    expect(graphSnapshotId({ ...asRun, edges: [{ source: 'a', target: 'b' }] })).not.toBe(graphSnapshotId(asRun));
  });

  test('canonical JSON parses back to what JSON.stringify gives', () => {
    const value = { b: [1, undefined, 'x', { d: null, c: true }], a: { z: undefined, y: new Date(0) }, e: '"quoted"' };
    const canonical = canonicalJson(value);
    expect(canonical).toBe(
      '{"a":{"y":"1970-01-01T00:00:00.000Z"},"b":[1,null,"x",{"c":true,"d":null}],"e":"\\"quoted\\""}',
    );
    expect(JSON.parse(canonical)).toEqual(JSON.parse(JSON.stringify(value)));
  });
});
