import { triggerConfigViolations, triggerConnectionNeeds } from '@weft/contracts';
import { nodeLabel, type GraphNode } from '../process/graph.js';
import type { KnownConnection, LintFinding } from './lint-finding.js';

/**
 * An input node's trigger fields (cron syntax, IANA zone, polling interval, auth fields) and the
 * connection it names (exists, right type): found by lint and at start, not by a listener at run time.
 * Connections are checked only when the caller knows them (`connections` given).
 */
export function triggerFindings(
  node: GraphNode,
  connections: ReadonlyMap<string, KnownConnection> | undefined,
): LintFinding[] {
  if (node.type !== 'inputNode') return [];
  const name = `node "${nodeLabel(node) ?? node.id}"`;
  const findings: LintFinding[] = triggerConfigViolations(node.config).map((violation) => ({
    check: 'trigger-config',
    severity: 'error',
    message: `${name} (${String(node.config.triggerType)} trigger): ${violation.path} ${violation.message}`,
    nodeId: node.id,
  }));
  if (!connections) return findings;
  for (const need of triggerConnectionNeeds(node.config)) {
    const connection = connections.get(need.connectionId);
    const problem = !connection
      ? `connection ${JSON.stringify(need.connectionId)} does not exist`
      : need.types.includes(connection.type)
        ? undefined
        : `connection ${JSON.stringify(need.connectionId)} is a ${connection.type} connection; it must be ${need.types.join(' or ')}`;
    if (problem) {
      findings.push({
        check: 'trigger-connection',
        severity: 'error',
        message: `${name}: /config/${need.field}: ${problem}`,
        nodeId: node.id,
      });
    }
  }
  return findings;
}
