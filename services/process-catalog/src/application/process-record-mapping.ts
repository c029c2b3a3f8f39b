import type { ProcessEdge, ProcessRecord, VersionSummary } from '@weft/contracts';
import type { GraphEdge } from '../domain/process/graph.js';
import type { ProcessState } from '../domain/process/state.js';

/** The process form of an edge (snake_case), as the record shows it. */
export const toProcessEdge = (edge: GraphEdge): ProcessEdge => ({
  id: edge.id,
  source_node_id: edge.sourceNodeId,
  target_node_id: edge.targetNodeId,
  source_handle: edge.sourceHandle,
  target_handle: edge.targetHandle,
});

export const toProcessRecord = (state: ProcessState, revision: number, versions: VersionSummary[]): ProcessRecord => ({
  id: state.id,
  organization_id: state.organizationId,
  name: state.name,
  description: state.description,
  max_retries: state.maxRetries,
  is_running: state.isRunning,
  locked: state.locked,
  error_webhook_url: state.errorWebhookUrl,
  timeout_seconds: state.timeoutSeconds,
  nodes: state.nodes,
  edges: state.edges.map(toProcessEdge),
  versions,
  created_by: state.createdBy,
  created_by_id: state.createdById,
  created_at: state.createdAt,
  updated_at: state.updatedAt,
  revision,
});
