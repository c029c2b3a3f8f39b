import type { GraphEdge, GraphNode } from './graph.js';

/** Settings of a process that PUT changes (everything but the graph and the flags). */
export interface ProcessSettings {
  name: string;
  description: string;
  maxRetries: number;
  errorWebhookUrl: string | null;
  timeoutSeconds: number;
}

/** Every event of a process stream (`process-<id>`); `at` is the command's time. */
export type ProcessEvent =
  | {
      type: 'ProcessCreated';
      data: ProcessSettings & {
        processId: string;
        organizationId: string;
        nodes: GraphNode[];
        edges: GraphEdge[];
        createdBy: string;
        createdById: string;
        /** Set when the process was imported or forked. */
        origin?: { kind: 'import' | 'fork'; sourceProcessId?: string };
        at: string;
      };
    }
  | { type: 'ProcessSettingsChanged'; data: { changes: Partial<ProcessSettings>; at: string } }
  | { type: 'ProcessDeleted'; data: { at: string } }
  | { type: 'NodeAdded'; data: { node: GraphNode; at: string } }
  | {
      type: 'NodeUpdated';
      data: {
        node: GraphNode;
        /** Other nodes whose templates were rewritten because this node's label changed. */
        rewrittenConfigs: { nodeId: string; config: Record<string, unknown> }[];
        at: string;
      };
    }
  | { type: 'NodeDeleted'; data: { nodeId: string; removedEdgeIds: string[]; at: string } }
  | { type: 'EdgeAdded'; data: { edge: GraphEdge; at: string } }
  | { type: 'EdgeDeleted'; data: { edgeId: string; at: string } }
  | { type: 'GraphReplaced'; data: { nodes: GraphNode[]; edges: GraphEdge[]; at: string } }
  | { type: 'ProcessLocked'; data: { at: string } }
  | { type: 'ProcessUnlocked'; data: { at: string } }
  | { type: 'ProcessStarted'; data: { at: string } }
  | { type: 'ProcessStopped'; data: { at: string } }
  | {
      type: 'VersionCreated';
      data: {
        versionId: string;
        versionNumber: number;
        label: string;
        snapshot: { nodes: GraphNode[]; edges: GraphEdge[] };
        createdBy: string;
        createdById: string;
        at: string;
      };
    }
  | { type: 'VersionDeleted'; data: { versionId: string; at: string } }
  | {
      type: 'VersionRestored';
      data: { versionId: string; versionNumber: number; nodes: GraphNode[]; edges: GraphEdge[]; at: string };
    };

export type ProcessEventType = ProcessEvent['type'];

export const PROCESS_EVENT_TYPES: readonly ProcessEventType[] = [
  'ProcessCreated',
  'ProcessSettingsChanged',
  'ProcessDeleted',
  'NodeAdded',
  'NodeUpdated',
  'NodeDeleted',
  'EdgeAdded',
  'EdgeDeleted',
  'GraphReplaced',
  'ProcessLocked',
  'ProcessUnlocked',
  'ProcessStarted',
  'ProcessStopped',
  'VersionCreated',
  'VersionDeleted',
  'VersionRestored',
];

export const processStreamId = (processId: string): string => `process-${processId}`;
