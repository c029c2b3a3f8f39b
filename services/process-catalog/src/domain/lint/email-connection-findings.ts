import { nodeLabel, type GraphNode } from '../process/graph.js';
import type { KnownConnection, LintFinding } from './lint-finding.js';

/**
 * An email integration's connection must exist and be an `smtp` connection; found by lint, not
 * at run time. A templated id is resolved only when the node runs, so it is not checked here.
 */
export function emailConnectionFindings(
  node: GraphNode,
  connections: ReadonlyMap<string, KnownConnection> | undefined,
): LintFinding[] {
  const connectionId = node.config.connectionId;
  if (!connections || node.type !== 'integrationNode' || node.config.kind !== 'email') return [];
  if (typeof connectionId !== 'string' || connectionId === '' || connectionId.includes('{{')) return [];
  const connection = connections.get(connectionId);
  const problem = !connection
    ? `connection ${JSON.stringify(connectionId)} does not exist`
    : connection.type === 'smtp'
      ? undefined
      : `connection ${JSON.stringify(connectionId)} is a ${connection.type} connection; it must be smtp`;
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
