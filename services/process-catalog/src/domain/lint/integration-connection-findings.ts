import { nodeLabel, type GraphNode } from '../process/graph.js';
import type { KnownConnection, LintFinding } from './lint-finding.js';

/** The connection type each integration kind takes. */
const CONNECTION_TYPE_OF_KIND: Record<string, string> = { email: 'smtp', webhook: 'http', http: 'http' };

/**
 * An email integration's connection must exist and be an `smtp` connection, an http request's or
 * a webhook's an `http` one (its credentials, its signingSecret). Lint finds it before a run; the
 * node checks it again when it runs, since a templated id is resolved only then.
 */
export function integrationConnectionFindings(
  node: GraphNode,
  connections: ReadonlyMap<string, KnownConnection> | undefined,
): LintFinding[] {
  const connectionId = node.config.connectionId;
  const wanted = CONNECTION_TYPE_OF_KIND[String(node.config.kind)];
  if (!connections || node.type !== 'integrationNode' || !wanted) return [];
  if (typeof connectionId !== 'string' || connectionId === '' || connectionId.includes('{{')) return [];
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
