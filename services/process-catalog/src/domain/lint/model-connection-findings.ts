import { nodeLabel, type GraphNode } from '../process/graph.js';
import type { KnownConnection, LintFinding } from './lint-finding.js';

/**
 * The connection a model node names must exist and have the right type: `llm` for schematization in
 * llm mode and the openai provider, `http` for an ONNX model's URL; found by lint and at start.
 * A templated id is resolved only when the node runs, so it is not checked here.
 */
const connectionTypeOf = (node: GraphNode): string | undefined => {
  if (node.type === 'schematizationNode' && node.config.mode === 'llm') return 'llm';
  if (node.type === 'mlModelNode' && node.config.provider === 'openai') return 'llm';
  // An ONNX model downloaded from a URL takes its auth from an http connection.
  if (node.type === 'mlModelNode' && node.config.provider === 'onnx') return 'http';
  return undefined;
};

export function modelConnectionFindings(
  node: GraphNode,
  connections: ReadonlyMap<string, KnownConnection> | undefined,
): LintFinding[] {
  const connectionId = node.config.connectionId;
  const wanted = connectionTypeOf(node);
  if (!connections || !wanted || typeof connectionId !== 'string' || connectionId === '') return [];
  if (connectionId.includes('{{')) return [];
  const connection = connections.get(connectionId);
  const problem = !connection
    ? `connection ${JSON.stringify(connectionId)} does not exist`
    : connection.type === wanted
      ? undefined
      : `connection ${JSON.stringify(connectionId)} is a ${connection.type} connection; it must be ${wanted}`;
  if (!problem) return [];
  return [
    {
      check: 'node-config',
      severity: 'error',
      message: `node "${nodeLabel(node) ?? node.id}" (${node.type}): /config/connectionId: ${problem}`,
      nodeId: node.id,
    },
  ];
}
