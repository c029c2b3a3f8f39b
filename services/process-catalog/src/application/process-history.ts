import type { Page } from '@weft/contracts';
import type { EventStore, StoredEvent } from '@weft/event-store';
import { processStreamId, type ProcessEvent } from '../domain/process/events.js';
import { nodeLabel, type GraphNode } from '../domain/process/graph.js';
import { toProcessEvent } from '../projections/stored-process-event.js';
import { evolve, foldProcess, initialProcessState, type ProcessState } from '../domain/process/state.js';
import type { Caller } from './caller.js';
import { assertProcessAccess } from './process-access.js';
import type { ProcessQueries } from './process-queries.js';

/** One line of a process's audit history. */
export interface HistoryEntry {
  revision: number;
  type: string;
  /** The command's time. */
  at: string;
  recordedAt: string;
  actor: { id: string | null; name: string | null };
  traceId: string | null;
  correlationId: string | null;
  /** What happened, for a person. */
  summary: string;
}

const node = (n: GraphNode): string => `node "${nodeLabel(n) ?? n.id}" (${n.type})`;

/** A node of the process as it was just before the event, by label when it had one. */
const nodeById = (before: ProcessState, id: string): string => {
  const found = before.nodes.find((candidate) => candidate.id === id);
  return found ? node(found) : `node ${id}`;
};

/** What happened, for a person: nodes are named by label, as the process stood before the event. */
export function summarize(event: ProcessEvent, before: ProcessState = initialProcessState()): string {
  switch (event.type) {
    case 'ProcessCreated':
      return `created process "${event.data.name}" with ${event.data.nodes.length} nodes and ${event.data.edges.length} edges`;
    case 'ProcessSettingsChanged':
      return `changed ${Object.keys(event.data.changes).join(', ')}`;
    case 'ProcessDeleted':
      return 'deleted the process';
    case 'NodeAdded':
      return `added ${node(event.data.node)}`;
    case 'NodeUpdated':
      return (
        `changed ${node(event.data.node)}` +
        (event.data.rewrittenConfigs.length > 0
          ? `, rewriting references in ${event.data.rewrittenConfigs.length} other nodes`
          : '')
      );
    case 'NodeDeleted':
      return `deleted ${nodeById(before, event.data.nodeId)} and ${event.data.removedEdgeIds.length} edges`;
    case 'EdgeAdded': {
      const { sourceNodeId, sourceHandle, targetNodeId } = event.data.edge;
      return `connected ${nodeById(before, sourceNodeId)} (${sourceHandle}) to ${nodeById(before, targetNodeId)}`;
    }
    case 'EdgeDeleted': {
      const edge = before.edges.find((candidate) => candidate.id === event.data.edgeId);
      return edge
        ? `disconnected ${nodeById(before, edge.sourceNodeId)} (${edge.sourceHandle}) from ${nodeById(before, edge.targetNodeId)}`
        : `deleted edge ${event.data.edgeId}`;
    }
    case 'GraphReplaced':
      return `replaced the graph (${event.data.nodes.length} nodes, ${event.data.edges.length} edges)`;
    case 'ProcessLocked':
      return 'locked the process';
    case 'ProcessUnlocked':
      return 'unlocked the process';
    case 'ProcessStarted':
      return 'started the process';
    case 'ProcessStopped':
      return 'stopped the process';
    case 'VersionCreated':
      return `created version ${event.data.versionNumber} "${event.data.label}"`;
    case 'VersionDeleted':
      return `deleted version ${event.data.versionId}`;
    case 'VersionRestored':
      return `restored version ${event.data.versionNumber}`;
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

function toEntry(stored: StoredEvent, event: ProcessEvent, before: ProcessState): HistoryEntry {
  return {
    revision: stored.streamVersion,
    type: stored.type,
    at: event.data.at,
    recordedAt: stored.recordedAt.toISOString(),
    actor: { id: text(stored.metadata.actorId), name: text(stored.metadata.actorName) },
    traceId: text(stored.metadata.traceId),
    correlationId: text(stored.metadata.correlationId),
    summary: summarize(event, before),
  };
}

/** Every event of a process, oldest first, paged. */
export async function processHistory(
  processId: string,
  page: { page: number; pageSize: number },
  caller: Caller,
  queries: ProcessQueries,
  store: EventStore,
): Promise<Page<HistoryEntry>> {
  const current = await queries.state(processId);
  if (current) assertProcessAccess({ id: processId, organizationId: current.state.organizationId }, caller);
  // The whole stream is folded so each summary can name nodes as they were; a deleted process has
  // no read-model row, but its audit trail stays readable (like `?at=`).
  const all = await store.readStream(processStreamId(processId));
  if (!current) {
    const organizationId = foldProcess(all.flatMap((event) => toProcessEvent(event) ?? [])).organizationId;
    assertProcessAccess(organizationId ? { id: processId, organizationId } : undefined, caller);
  }
  // Every event of a process stream is a process event, so revisions page the history directly.
  const first = (page.page - 1) * page.pageSize + 1;
  const last = first + page.pageSize - 1;
  const items: HistoryEntry[] = [];
  let state = initialProcessState();
  for (const stored of all) {
    if (stored.streamVersion > last) break;
    const domain = toProcessEvent(stored);
    if (!domain) continue;
    if (stored.streamVersion >= first) items.push(toEntry(stored, domain, state));
    state = evolve(state, domain);
  }
  return { items, page: page.page, pageSize: page.pageSize, total: all.at(-1)?.streamVersion ?? 0 };
}
