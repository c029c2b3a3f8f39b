import { lintProcess } from '../src/domain/lint/lint-process.js';
import type { GraphNode } from '../src/domain/process/graph.js';
import { edge, ids, realisticEdges, realisticNodes } from './fixtures/realistic-process.js';

const checks = (report: ReturnType<typeof lintProcess>): string[] =>
  report.findings.map((finding) => finding.check).sort();

describe('lint', () => {
  test('the realistic process is valid', () => {
    expect(lintProcess({ nodes: realisticNodes(), edges: realisticEdges() }, new Map())).toEqual({
      valid: true,
      findings: [],
    });
  });

  test('an empty process lacks input and output nodes', () => {
    expect(checks(lintProcess({ nodes: [], edges: [] }, new Map()))).toEqual([
      'input-node-exists',
      'output-node-exists',
    ]);
  });

  test('orphans, missing config, unknown types, dangling edges and cycles', () => {
    const nodes: GraphNode[] = [
      ...realisticNodes().map((node) =>
        node.id === ids.scriptB ? { ...node, config: { label: 'Full price' } } : node,
      ),
      {
        id: '00000000-0000-4000-8000-000000000020',
        type: 'teleportNode',
        position: { x: 0, y: 0 },
        config: { label: 'T' },
      },
    ];
    const edges = [
      ...realisticEdges(),
      edge('00000000-0000-4000-8000-0000000000f1', ids.output, ids.conditional),
      edge('00000000-0000-4000-8000-0000000000f2', ids.output, '00000000-0000-4000-8000-0000000000ff'),
    ];
    const report = lintProcess({ nodes, edges }, new Map());
    expect(report.valid).toBe(false);
    expect(checks(report)).toEqual([
      'edge-endpoints',
      'known-node-types',
      'no-cycles',
      'no-orphan-nodes',
      'required-config-fields',
    ]);
    expect(report.findings.find((finding) => finding.check === 'no-orphan-nodes')?.nodeId).toBe(
      '00000000-0000-4000-8000-000000000020',
    );
    expect(report.findings.find((finding) => finding.check === 'required-config-fields')?.message).toContain('code');
  });

  test('templates must reference known labels of ancestors', () => {
    const nodes = realisticNodes().map((node) =>
      node.id === ids.scriptA
        ? {
            ...node,
            config: { ...node.config, code: 'x', note: '{{input["Full price"]["total"]}} {{input["Ghost"]["x"]}}' },
          }
        : node,
    );
    const report = lintProcess({ nodes, edges: realisticEdges() }, new Map());
    expect(report.findings.map((finding) => [finding.check, finding.nodeId, finding.message])).toEqual([
      ['template-references', ids.scriptA, 'node "Discount" references "Full price", which does not run before it'],
      ['template-references', ids.scriptA, 'node "Discount" references unknown label "Ghost"'],
    ]);
  });

  test('schema references must resolve to a schema and its data blocks', () => {
    const nodes = realisticNodes().map((node) =>
      node.id === ids.input ? { ...node, config: { ...node.config, schemaId: 's1', dataBlockId: 'b2' } } : node,
    );
    const schemas = new Map([['s1', { id: 's1', dataBlocks: [{ id: 'b1', name: 'order' }] }]]);
    expect(checks(lintProcess({ nodes, edges: realisticEdges() }, schemas))).toEqual(['schema-references']);
    const fixed = nodes.map((node) =>
      node.id === ids.input ? { ...node, config: { ...node.config, dataBlockId: 'b1' } } : node,
    );
    expect(lintProcess({ nodes: fixed, edges: realisticEdges() }, schemas).valid).toBe(true);
    expect(checks(lintProcess({ nodes: fixed, edges: realisticEdges() }, new Map()))).toEqual(['schema-references']);
  });

  test('configs the engine would refuse are reported with the engine schema', () => {
    const nodes = realisticNodes().map((node) =>
      node.id === ids.input
        ? { ...node, config: { label: 'Order', triggerType: 'carrier-pigeon' } }
        : node.id === ids.scriptA
          ? { ...node, config: { ...node.config, timeoutMs: 0 } }
          : node,
    );
    const report = lintProcess({ nodes, edges: realisticEdges() }, new Map());
    expect(report.valid).toBe(false);
    expect(report.findings.map((finding) => [finding.check, finding.nodeId])).toEqual([
      ['node-config', ids.input],
      ['node-config', ids.scriptA],
    ]);
  });

  // ajv reports the errors of both conditional shapes; lint lists only those of the node's mode.
  test('a conditional is checked against the shape of its mode only', () => {
    const nodes = realisticNodes().map((node) =>
      node.id === ids.conditional
        ? { ...node, config: { ...node.config, conditions: [{ left: 1, operator: 'bogus', right: 2 }] } }
        : node,
    );
    const report = lintProcess({ nodes, edges: realisticEdges() }, new Map());
    expect(report.findings.map((finding) => finding.message)).toEqual([
      'node "Big order" (conditionalNode): /config/conditions/0/operator must be equal to one of the allowed values',
    ]);
    const switchNodes = realisticNodes().map((node) =>
      node.id === ids.conditional
        ? { ...node, config: { label: 'Big order', mode: 'switch', value: 1, cases: 'nope' } }
        : node,
    );
    const switchReport = lintProcess({ nodes: switchNodes, edges: [] }, new Map());
    expect(switchReport.findings.filter((finding) => finding.check === 'node-config').map((f) => f.message)).toEqual([
      'node "Big order" (conditionalNode): /config/cases must be array',
    ]);
  });

  test('template references in every form the engine reads are checked; cycles are named by label', () => {
    const nodes = realisticNodes().map((node) =>
      node.id === ids.output
        ? { ...node, config: { label: 'Reply', fields: { a: "{{input['Ghost'].x}}", b: '{{input.Nobody.y}}' } } }
        : node,
    );
    const edges = [...realisticEdges(), edge('00000000-0000-4000-8000-0000000000f1', ids.output, ids.input)];
    const report = lintProcess({ nodes, edges }, new Map());
    expect(report.findings.map((finding) => finding.message)).toEqual([
      'the graph has a cycle through or behind nodes "Order", "Big order", "Discount", "Full price", "Reply"',
      'node "Reply" references unknown label "Ghost"',
      'node "Reply" references unknown label "Nobody"',
    ]);
  });
});
