import { nodeConfigSchemas, validateNodeConfig, type GraphSnapshot } from '@weft/contracts';
import { deepFreeze, isDeepFrozen } from './deep-freeze.js';

/**
 * The process graph compiled for running: adjacency by node, the body of every loop, and labels.
 * Built once per process revision and shared by every execution of it.
 */
export interface GraphNode {
  id: string;
  type: string;
  label: string;
  config: Record<string, unknown>;
  /** Why the config breaks its type's schema (the catalog's lint uses the same); the node fails with it. */
  configError?: string;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  sourceHandle: string;
  targetHandle: string;
}

export interface ExecutionGraph {
  nodes: ReadonlyMap<string, GraphNode>;
  incoming: ReadonlyMap<string, readonly GraphEdge[]>;
  outgoing: ReadonlyMap<string, readonly GraphEdge[]>;
  /** Nodes reachable from each loop's `start` handle. */
  loopBodies: ReadonlyMap<string, ReadonlySet<string>>;
  /** Nodes outside every loop body: the scope of the main run. */
  mainScope: ReadonlySet<string>;
}

export class GraphError extends Error {
  override name = 'GraphError';
}

export const LOOP_BODY_HANDLE = 'start';
export const DEFAULT_HANDLE = 'output';

const labelOf = (node: { id: string; config: Record<string, unknown> }): string =>
  typeof node.config.label === 'string' && node.config.label.length > 0 ? node.config.label : node.id;

const MAX_LISTED_VIOLATIONS = 5;

/** A saved draft may hold an invalid config; checked once per compiled graph, not per run. */
const configErrorOf = (type: string, config: Record<string, unknown>): string | undefined => {
  if (!nodeConfigSchemas[type]) return undefined;
  const violations = validateNodeConfig(type, config);
  if (violations.length === 0) return undefined;
  const listed = [...new Set(violations.map((violation) => `${violation.path} ${violation.message}`))];
  return `invalid config: ${listed.slice(0, MAX_LISTED_VIOLATIONS).join('; ')}`;
};

export function compileGraph(snapshot: GraphSnapshot): ExecutionGraph {
  const nodes = new Map<string, GraphNode>();
  for (const node of snapshot.nodes) {
    const config = node.config ?? {};
    const configError = configErrorOf(node.type, config);
    nodes.set(node.id, {
      id: node.id,
      type: node.type,
      label: labelOf(node),
      config,
      ...(configError ? { configError } : {}),
    });
  }
  const incoming = new Map<string, GraphEdge[]>([...nodes.keys()].map((id) => [id, []]));
  const outgoing = new Map<string, GraphEdge[]>([...nodes.keys()].map((id) => [id, []]));
  for (const edge of snapshot.edges) {
    if (!nodes.has(edge.sourceNodeId) || !nodes.has(edge.targetNodeId)) {
      throw new GraphError(`edge ${edge.id} joins a node that does not exist`);
    }
    const compiled: GraphEdge = {
      id: edge.id,
      source: edge.sourceNodeId,
      target: edge.targetNodeId,
      sourceHandle: edge.sourceHandle || DEFAULT_HANDLE,
      targetHandle: edge.targetHandle || 'input',
    };
    outgoing.get(compiled.source)?.push(compiled);
    incoming.get(compiled.target)?.push(compiled);
  }
  assertAcyclic(nodes, outgoing);

  const loopBodies = new Map<string, Set<string>>();
  for (const node of nodes.values()) {
    if (node.type !== 'loopNode') continue;
    const body = new Set<string>();
    const stack = (outgoing.get(node.id) ?? []).filter((e) => e.sourceHandle === LOOP_BODY_HANDLE).map((e) => e.target);
    while (stack.length > 0) {
      const id = stack.pop() as string;
      if (body.has(id)) continue;
      body.add(id);
      for (const edge of outgoing.get(id) ?? []) stack.push(edge.target);
    }
    loopBodies.set(node.id, body);
  }
  const inSomeBody = new Set([...loopBodies.values()].flatMap((body) => [...body]));
  const mainScope = new Set([...nodes.keys()].filter((id) => !inSomeBody.has(id)));
  return { nodes, incoming, outgoing, loopBodies, mainScope };
}

function assertAcyclic(nodes: ReadonlyMap<string, GraphNode>, outgoing: ReadonlyMap<string, GraphEdge[]>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (start: string): void => {
    const stack: { id: string; next: number }[] = [{ id: start, next: 0 }];
    state.set(start, 'visiting');
    while (stack.length > 0) {
      const frame = stack[stack.length - 1] as { id: string; next: number };
      const edges = outgoing.get(frame.id) ?? [];
      const edge = edges[frame.next++];
      if (!edge) {
        state.set(frame.id, 'done');
        stack.pop();
        continue;
      }
      const seen = state.get(edge.target);
      if (seen === 'visiting') throw new GraphError(`the graph has a cycle through node ${edge.target}`);
      if (!seen) {
        state.set(edge.target, 'visiting');
        stack.push({ id: edge.target, next: 0 });
      }
    }
  };
  for (const id of nodes.keys()) if (!state.has(id)) visit(id);
}

/** The snapshot form (camelCase) of a process record's graph, as stored on ExecutionStarted. */
export function snapshotOf(process: {
  nodes: { id: string; type: string; position: { x: number; y: number }; config: Record<string, unknown> }[];
  edges: { id: string; source_node_id: string; target_node_id: string; source_handle: string; target_handle: string }[];
}): GraphSnapshot {
  // A deep-frozen record (the engine's copy of a revision) gets one deep-frozen snapshot for all
  // its runs: what is keyed or measured per snapshot object (its stored id, its size) is then
  // done once.
  const frozen = isDeepFrozen(process);
  const known = frozen ? snapshotsOfFrozen.get(process) : undefined;
  if (known) return known;
  // Keys in the order jsonb keeps them (shorter first, then by bytes): PostgreSQL, which parses
  // every run's ExecutionStarted, then finds these objects sorted.
  const snapshot: GraphSnapshot = {
    edges: process.edges.map((e) => ({
      id: e.id,
      sourceHandle: e.source_handle || DEFAULT_HANDLE,
      sourceNodeId: e.source_node_id,
      targetHandle: e.target_handle || 'input',
      targetNodeId: e.target_node_id,
    })),
    nodes: process.nodes.map((n) => ({ id: n.id, type: n.type, config: n.config, position: n.position })),
  };
  if (!frozen) return snapshot;
  snapshotsOfFrozen.set(process, deepFreeze(snapshot));
  return snapshot;
}

const snapshotsOfFrozen = new WeakMap<object, GraphSnapshot>();
