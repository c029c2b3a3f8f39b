import { nodeLabel, type GraphNode } from '../process/graph.js';
import type { KnownConnection, LintFinding } from './lint-finding.js';

/** The connection type each integration kind takes (the HTTP kind when none is named). */
const CONNECTION_TYPE_OF_KIND: Record<string, string> = { email: 'smtp', webhook: 'http', http: 'http' };

/**
 * The type of connection a node's `connectionId` must name: `smtp` for an email integration,
 * `http` for an HTTP request or a webhook (its credentials, its signingSecret) and for an ONNX
 * model downloaded from a URL, `llm` for schematization in llm mode and the openai provider.
 */
function wantedConnectionType(node: GraphNode): string | undefined {
  switch (node.type) {
    case 'integrationNode': {
      const kind = node.config.kind ?? 'http';
      return typeof kind === 'string' && Object.hasOwn(CONNECTION_TYPE_OF_KIND, kind)
        ? CONNECTION_TYPE_OF_KIND[kind]
        : undefined;
    }
    case 'schematizationNode':
      return node.config.mode === 'llm' ? 'llm' : undefined;
    case 'mlModelNode':
      return node.config.provider === 'openai' ? 'llm' : node.config.provider === 'onnx' ? 'http' : undefined;
    default:
      return undefined;
  }
}

/**
 * A node's connection must exist and be of the type its node takes. Lint finds it before a run;
 * the node checks it again when it runs, since a templated id is resolved only then.
 */
export function connectionTypeFindings(
  node: GraphNode,
  connections: ReadonlyMap<string, KnownConnection> | undefined,
): LintFinding[] {
  const connectionId = node.config.connectionId;
  const wanted = wantedConnectionType(node);
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
