import type { GraphEdge, GraphNode } from './graph.js';
import type { ProcessEvent, ProcessSettings } from './events.js';

/** A process as its events leave it; plain JSON so the read model can store it as is. */
export interface ProcessState extends ProcessSettings {
  status: 'new' | 'active' | 'deleted';
  id: string;
  organizationId: string;
  isRunning: boolean;
  locked: boolean;
  nodes: GraphNode[];
  edges: GraphEdge[];
  createdBy: string;
  createdById: string;
  createdAt: string;
  updatedAt: string;
  lastVersionNumber: number;
  /** Ids of versions not deleted, oldest first. */
  versionIds: string[];
}

export const initialProcessState = (): ProcessState => ({
  status: 'new',
  id: '',
  organizationId: '',
  name: '',
  description: '',
  maxRetries: 0,
  errorWebhookUrl: null,
  timeoutSeconds: 0,
  isRunning: false,
  locked: false,
  nodes: [],
  edges: [],
  createdBy: '',
  createdById: '',
  createdAt: '',
  updatedAt: '',
  lastVersionNumber: 0,
  versionIds: [],
});

export function evolve(state: ProcessState, event: ProcessEvent): ProcessState {
  switch (event.type) {
    case 'ProcessCreated': {
      const { data } = event;
      return {
        ...state,
        status: 'active',
        id: data.processId,
        organizationId: data.organizationId,
        name: data.name,
        description: data.description,
        maxRetries: data.maxRetries,
        errorWebhookUrl: data.errorWebhookUrl,
        timeoutSeconds: data.timeoutSeconds,
        nodes: data.nodes,
        edges: data.edges,
        createdBy: data.createdBy,
        createdById: data.createdById,
        createdAt: data.at,
        updatedAt: data.at,
      };
    }
    case 'ProcessSettingsChanged':
      return { ...state, ...event.data.changes, updatedAt: event.data.at };
    case 'ProcessDeleted':
      return { ...state, status: 'deleted', isRunning: false, updatedAt: event.data.at };
    case 'NodeAdded':
      return { ...state, nodes: [...state.nodes, event.data.node], updatedAt: event.data.at };
    case 'NodeUpdated': {
      const rewritten = new Map(event.data.rewrittenConfigs.map((entry) => [entry.nodeId, entry.config]));
      const nodes = state.nodes.map((node) => {
        if (node.id === event.data.node.id) return event.data.node;
        const config = rewritten.get(node.id);
        return config ? { ...node, config } : node;
      });
      return { ...state, nodes, updatedAt: event.data.at };
    }
    case 'NodeDeleted': {
      const removed = new Set(event.data.removedEdgeIds);
      return {
        ...state,
        nodes: state.nodes.filter((node) => node.id !== event.data.nodeId),
        edges: state.edges.filter((edge) => !removed.has(edge.id)),
        updatedAt: event.data.at,
      };
    }
    case 'EdgeAdded':
      return { ...state, edges: [...state.edges, event.data.edge], updatedAt: event.data.at };
    case 'EdgeDeleted':
      return { ...state, edges: state.edges.filter((edge) => edge.id !== event.data.edgeId), updatedAt: event.data.at };
    case 'GraphReplaced':
    case 'VersionRestored':
      return { ...state, nodes: event.data.nodes, edges: event.data.edges, updatedAt: event.data.at };
    case 'ProcessLocked':
      return { ...state, locked: true, updatedAt: event.data.at };
    case 'ProcessUnlocked':
      return { ...state, locked: false, updatedAt: event.data.at };
    case 'ProcessStarted':
      return { ...state, isRunning: true, updatedAt: event.data.at };
    case 'ProcessStopped':
      return { ...state, isRunning: false, updatedAt: event.data.at };
    case 'VersionCreated':
      // A version does not change the process itself, so updatedAt stays.
      return {
        ...state,
        lastVersionNumber: event.data.versionNumber,
        versionIds: [...state.versionIds, event.data.versionId],
      };
    case 'VersionDeleted':
      return { ...state, versionIds: state.versionIds.filter((id) => id !== event.data.versionId) };
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}

export const foldProcess = (
  events: readonly ProcessEvent[],
  from: ProcessState = initialProcessState(),
): ProcessState => events.reduce(evolve, from);
