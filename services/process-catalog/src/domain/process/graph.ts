/** The graph of a process in the domain's own (camelCase) shape, as snapshots use it. */
export interface NodePosition {
  x: number;
  y: number;
}

export interface GraphNode {
  id: string;
  type: string;
  position: NodePosition;
  config: Record<string, unknown>;
}

export interface GraphEdge {
  id: string;
  sourceNodeId: string;
  targetNodeId: string;
  sourceHandle: string;
  targetHandle: string;
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export const DEFAULT_SOURCE_HANDLE = 'output';
export const DEFAULT_TARGET_HANDLE = 'input';

/** A node's label; an empty one counts as none (lint asks for it), so two fresh nodes never clash. */
export const nodeLabel = (node: GraphNode): string | undefined =>
  typeof node.config.label === 'string' && node.config.label !== '' ? node.config.label : undefined;
