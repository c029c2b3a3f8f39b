import { forbidden } from '@weft/contracts';
import type { GraphNode } from '../domain/process/graph.js';
import type { Caller } from './caller.js';

const connectionIdsOf = (nodes: readonly GraphNode[]): Set<string> =>
  new Set(nodes.flatMap((node) => (typeof node.config.connectionId === 'string' ? [node.config.connectionId] : [])));

/**
 * A key restricted to process ids may keep the connections its processes already use, but not
 * point them at other connections of the organization (whose credentials it was never given).
 */
export function assertNoNewConnectionReferences(
  before: readonly GraphNode[],
  after: readonly GraphNode[],
  caller: Caller,
): void {
  if (!caller.actor.processIds) return;
  const allowed = connectionIdsOf(before);
  const added = [...connectionIdsOf(after)].filter((connectionId) => !allowed.has(connectionId));
  if (added.length > 0) {
    throw forbidden(
      `this API key is restricted to some processes and cannot make them use connection ${added.join(', ')}`,
    );
  }
}
