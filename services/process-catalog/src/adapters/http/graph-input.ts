import { badRequest } from '@weft/contracts';
import {
  DEFAULT_SOURCE_HANDLE,
  DEFAULT_TARGET_HANDLE,
  type Graph,
  type GraphEdge,
  type GraphNode,
  type NodePosition,
} from '../../domain/process/graph.js';
import { isUuid } from '../../domain/shared/uuid.js';

/** A node as the HTTP body carries it (schema-validated by the gateway). */
export interface NodeInput {
  id?: string;
  type: string;
  position?: NodePosition;
  config?: Record<string, unknown>;
}

/** An edge in the process form (snake_case). */
export interface EdgeInput {
  id?: string;
  source_node_id: string;
  target_node_id: string;
  source_handle?: string;
  target_handle?: string;
}

const toNode = (input: NodeInput, id: string): GraphNode => ({
  id,
  type: input.type,
  position: input.position ?? { x: 0, y: 0 },
  config: input.config ?? {},
});

/** A single node to add: a given id must be a UUID (an unused one; the decider checks that). */
export function nodeFromInput(input: NodeInput, newId: () => string): GraphNode {
  if (input.id !== undefined && !isUuid(input.id)) {
    throw badRequest('node id must be a UUID', [{ path: '/id', message: 'must be a UUID (or be left out)' }]);
  }
  return toNode(input, input.id ?? newId());
}

export function edgeFromInput(input: EdgeInput, newId: () => string): GraphEdge {
  if (input.id !== undefined && !isUuid(input.id)) {
    throw badRequest('edge id must be a UUID', [{ path: '/id', message: 'must be a UUID (or be left out)' }]);
  }
  return {
    id: input.id ?? newId(),
    sourceNodeId: input.source_node_id,
    targetNodeId: input.target_node_id,
    sourceHandle: input.source_handle ?? DEFAULT_SOURCE_HANDLE,
    targetHandle: input.target_handle ?? DEFAULT_TARGET_HANDLE,
  };
}

/**
 * A whole graph as a canvas (or an import) sends it. Node ids that are unused UUIDs are kept;
 * any other id is a local key, replaced by a new UUID, and edges are remapped through it.
 */
export function graphFromInput(
  nodes: readonly NodeInput[],
  edges: readonly { id?: string; source: string; target: string; sourceHandle?: string; targetHandle?: string }[],
  newId: () => string,
): Graph {
  // Edges name nodes by these keys, so a key given twice would make them ambiguous.
  const seen = new Set<string>();
  const duplicates = nodes.flatMap((input, index) => {
    if (input.id === undefined) return [];
    const duplicate = seen.has(input.id);
    seen.add(input.id);
    return duplicate ? [{ path: `/nodes/${index}/id`, message: `node id "${input.id}" is used twice` }] : [];
  });
  if (duplicates.length > 0) throw badRequest('node ids must be unique within the graph', duplicates);
  const idFor = new Map<string, string>();
  const graphNodes = nodes.map((input) => {
    const id = input.id !== undefined && isUuid(input.id) ? input.id : newId();
    if (input.id !== undefined) idFor.set(input.id, id);
    return toNode(input, id);
  });
  const edgeIds = new Set<string>();
  const graphEdges = edges.map((input) => {
    const id = input.id !== undefined && isUuid(input.id) && !edgeIds.has(input.id) ? input.id : newId();
    edgeIds.add(id);
    return {
      id,
      sourceNodeId: idFor.get(input.source) ?? input.source,
      targetNodeId: idFor.get(input.target) ?? input.target,
      sourceHandle: input.sourceHandle ?? DEFAULT_SOURCE_HANDLE,
      targetHandle: input.targetHandle ?? DEFAULT_TARGET_HANDLE,
    };
  });
  return { nodes: graphNodes, edges: graphEdges };
}

/** The process form (snake_case edges) into the domain graph. */
export const processFormGraph = (
  nodes: readonly NodeInput[],
  edges: readonly EdgeInput[],
  newId: () => string,
): Graph =>
  graphFromInput(
    nodes,
    edges.map((edge) => ({
      id: edge.id,
      source: edge.source_node_id,
      target: edge.target_node_id,
      sourceHandle: edge.source_handle,
      targetHandle: edge.target_handle,
    })),
    newId,
  );
