import { nodeLabel, type GraphNode } from '../process/graph.js';
import type { KnownConnection, LintFinding } from './lint-finding.js';

/**
 * The `llm` connection a model node names (schematization in llm mode, mlModelNode with the openai
 * provider) must exist and be an `llm` connection; found by lint and at start, not at run time.
 * A templated id is resolved only when the node runs, so it is not checked here.
 */
const needsLlmConnection = (node: GraphNode): boolean =>
  (node.type === 'schematizationNode' && node.config.mode === 'llm') ||
  (node.type === 'mlModelNode' && node.config.provider === 'openai');

export function modelConnectionFindings(
  node: GraphNode,
  connections: ReadonlyMap<string, KnownConnection> | undefined,
): LintFinding[] {
  const connectionId = node.config.connectionId;
  if (!connections || !needsLlmConnection(node) || typeof connectionId !== 'string' || connectionId === '') return [];
  if (connectionId.includes('{{')) return [];
  const connection = connections.get(connectionId);
  const problem = !connection
    ? `connection ${JSON.stringify(connectionId)} does not exist`
    : connection.type === 'llm'
      ? undefined
      : `connection ${JSON.stringify(connectionId)} is a ${connection.type} connection; it must be llm`;
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
