/** The process record as the public API returns it (snake_case, spec "Process"). */
export interface NodePosition {
  x: number;
  y: number;
}

export interface ProcessNode {
  id: string;
  type: string;
  position: NodePosition;
  config: Record<string, unknown>;
}

export interface ProcessEdge {
  id: string;
  source_node_id: string;
  target_node_id: string;
  source_handle: string;
  target_handle: string;
}

export interface VersionSummary {
  id: string;
  versionNumber: number;
  label: string;
  createdBy: string;
  createdAt: string;
}

export interface ProcessRecord {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  max_retries: number;
  is_running: boolean;
  locked: boolean;
  error_webhook_url: string | null;
  timeout_seconds: number;
  nodes: ProcessNode[];
  edges: ProcessEdge[];
  versions: VersionSummary[];
  created_by: string;
  created_by_id: string;
  created_at: string;
  updated_at: string;
  revision: number;
}

/** A connection's secret data, decrypted; only ever sent over the internal bus. */
export interface DecryptedConnection {
  id: string;
  organizationId: string;
  type: 'gmail-oauth' | 'outlook-oauth' | 'google-service-account' | 'postgres' | 'mysql' | 'http' | 'smtp' | 'llm';
  name: string;
  data: Record<string, unknown>;
}
