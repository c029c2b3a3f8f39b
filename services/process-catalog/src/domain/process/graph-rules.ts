import { isUuid } from '../shared/uuid.js';
import type { Violation } from '../shared/violation.js';
import { DEFAULT_TARGET_HANDLE, nodeLabel, type Graph, type GraphEdge, type GraphNode } from './graph.js';
import { outputHandles } from './node-types.js';

/** Structural rules every stored graph keeps; each broken rule is one violation. */
export function nodeViolations(node: GraphNode, path: string): Violation[] {
  const violations: Violation[] = [];
  if (!isUuid(node.id)) violations.push({ path: `${path}/id`, message: 'must be a UUID' });
  if (typeof node.type !== 'string' || node.type.length === 0) {
    violations.push({ path: `${path}/type`, message: 'must be a non-empty string' });
  }
  const position = node.position as unknown;
  if (
    !position ||
    typeof position !== 'object' ||
    !Number.isFinite((position as { x?: unknown }).x) ||
    !Number.isFinite((position as { y?: unknown }).y)
  ) {
    violations.push({ path: `${path}/position`, message: 'must be {x, y} with finite numbers' });
  }
  const config = node.config as unknown;
  if (!config || typeof config !== 'object' || Array.isArray(config)) {
    violations.push({ path: `${path}/config`, message: 'must be an object' });
  } else if (node.config.label !== undefined && typeof node.config.label !== 'string') {
    violations.push({ path: `${path}/config/label`, message: 'must be a string' });
  }
  return violations;
}

export function duplicateLabelViolations(nodes: readonly GraphNode[], pathOf: (index: number) => string): Violation[] {
  const seen = new Map<string, number>();
  const violations: Violation[] = [];
  nodes.forEach((node, index) => {
    const label = nodeLabel(node);
    if (label === undefined) return;
    const first = seen.get(label);
    if (first === undefined) seen.set(label, index);
    else
      violations.push({
        path: `${pathOf(index)}/config/label`,
        message: `label "${label}" is already used by another node`,
      });
  });
  return violations;
}

export function edgeViolations(edge: GraphEdge, nodesById: ReadonlyMap<string, GraphNode>, path: string): Violation[] {
  const violations: Violation[] = [];
  if (!isUuid(edge.id)) violations.push({ path: `${path}/id`, message: 'must be a UUID' });
  const source = nodesById.get(edge.sourceNodeId);
  const target = nodesById.get(edge.targetNodeId);
  if (!source)
    violations.push({ path: `${path}/sourceNodeId`, message: `node ${edge.sourceNodeId} is not in the process` });
  if (!target)
    violations.push({ path: `${path}/targetNodeId`, message: `node ${edge.targetNodeId} is not in the process` });
  if (source) {
    const handles = outputHandles(source);
    if (!handles.includes(edge.sourceHandle)) {
      violations.push({
        path: `${path}/sourceHandle`,
        message: `node ${source.id} (${source.type}) has no output handle "${edge.sourceHandle}"; it has: ${handles.join(', ') || 'none'}`,
      });
    }
  }
  if (edge.targetHandle !== DEFAULT_TARGET_HANDLE) {
    violations.push({ path: `${path}/targetHandle`, message: `the only input handle is "${DEFAULT_TARGET_HANDLE}"` });
  }
  return violations;
}

const edgeKey = (edge: GraphEdge): string =>
  `${edge.sourceNodeId}\u0000${edge.sourceHandle}\u0000${edge.targetNodeId}\u0000${edge.targetHandle}`;

export function duplicateEdgeViolations(edges: readonly GraphEdge[], pathOf: (index: number) => string): Violation[] {
  const ids = new Set<string>();
  const keys = new Set<string>();
  const violations: Violation[] = [];
  edges.forEach((edge, index) => {
    if (ids.has(edge.id)) violations.push({ path: `${pathOf(index)}/id`, message: `edge id ${edge.id} is used twice` });
    if (keys.has(edgeKey(edge)))
      violations.push({ path: pathOf(index), message: 'the same connection exists already' });
    ids.add(edge.id);
    keys.add(edgeKey(edge));
  });
  return violations;
}

/** Every violation of a whole graph, paths relative to `/nodes` and `/edges`. */
export function graphViolations(graph: Graph): Violation[] {
  const violations: Violation[] = [];
  const nodesById = new Map<string, GraphNode>();
  graph.nodes.forEach((node, index) => {
    violations.push(...nodeViolations(node, `/nodes/${index}`));
    if (nodesById.has(node.id))
      violations.push({ path: `/nodes/${index}/id`, message: `node id ${node.id} is used twice` });
    nodesById.set(node.id, node);
  });
  violations.push(...duplicateLabelViolations(graph.nodes, (index) => `/nodes/${index}`));
  graph.edges.forEach((edge, index) => violations.push(...edgeViolations(edge, nodesById, `/edges/${index}`)));
  violations.push(...duplicateEdgeViolations(graph.edges, (index) => `/edges/${index}`));
  return violations;
}
