import type { Command } from '../shared/command-metadata.js';
import type { KnownConnection, KnownSchema } from '../lint/lint-finding.js';
import type { Graph, GraphEdge, GraphNode, NodePosition } from './graph.js';
import type { ProcessSettings } from './events.js';

/** Every command a process accepts; the adapter fills ids and metadata. */
export type ProcessCommand =
  | Command<
      'CreateProcess',
      ProcessSettings & {
        processId: string;
        organizationId: string;
        nodes: GraphNode[];
        edges: GraphEdge[];
        origin?: { kind: 'import' | 'fork'; sourceProcessId?: string };
      }
    >
  | Command<'ChangeProcessSettings', { changes: Partial<ProcessSettings>; graph?: Graph }>
  | Command<'DeleteProcess', Record<string, never>>
  | Command<'AddNode', { node: GraphNode }>
  | Command<'UpdateNode', { nodeId: string; type?: string; position?: NodePosition; config?: Record<string, unknown> }>
  | Command<'DeleteNode', { nodeId: string }>
  | Command<'AddEdge', { edge: GraphEdge }>
  | Command<'DeleteEdge', { edgeId: string }>
  | Command<'ReplaceGraph', Graph>
  | Command<'LockProcess', Record<string, never>>
  | Command<'UnlockProcess', Record<string, never>>
  /** Carries the schemas the graph references so the lint gate stays pure. */
  | Command<'StartProcess', { schemas: KnownSchema[]; connections?: KnownConnection[] }>
  | Command<'StopProcess', Record<string, never>>
  | Command<'CreateVersion', { versionId: string; label: string }>
  | Command<'DeleteVersion', { versionId: string }>
  /** The snapshot comes from the version read model; the decider checks the version is this process's. */
  | Command<'RestoreVersion', { versionId: string; versionNumber: number; snapshot: Graph }>;

export type ProcessCommandType = ProcessCommand['type'];
