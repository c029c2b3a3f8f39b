/** The execution record as the public API returns it (snake_case, spec "Execution record"). */
export const EXECUTION_STATUSES = ['running', 'completed', 'failed', 'timeout', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** `pending` until its parents are done; `cancelled` when the execution stopped while it ran. */
export const NODE_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped', 'cancelled'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export interface NodeState {
  node_id: string;
  node_name: string;
  node_type: string;
  status: NodeStatus;
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  input_data: unknown;
  output_data: unknown;
  error: string | null;
  /** Times a loop body ran this node (absent outside loop bodies). */
  iterations?: number;
  /** Tokens a node that calls a language model spent on its last run (absent for other nodes). */
  token_usage?: TokenUsage;
}

/** A model call's token counts as OpenAI-compatible APIs report them, summed over the node's calls. */
export interface TokenUsage {
  model: string;
  /** Model calls made (a schematization repair loop makes several). */
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The graph as it ran (snapshot form of the spec, camelCase). */
export interface GraphSnapshot {
  nodes: { id: string; type: string; position: { x: number; y: number }; config: Record<string, unknown> }[];
  edges: { id: string; sourceNodeId: string; targetNodeId: string; sourceHandle: string; targetHandle: string }[];
}

export interface ExecutionSummary {
  id: string;
  execution_id: string;
  process_id: string;
  organization_id: string;
  status: ExecutionStatus;
  started_at: string;
  completed_at: string | null;
  /** Whole seconds, as the spec's record has it; `duration_ms` keeps the precision. */
  duration_seconds: number | null;
  duration_ms: number | null;
  error_message: string | null;
  triggered_by_user_id: string | null;
  trigger_node_id: string;
  /** 1 for the first run; raised by each retry. */
  attempt: number;
  /** Present (true) while the accepted execution waits in the work queue: status `running`, no node started. */
  queued?: true;
}

export interface ExecutionRecord extends ExecutionSummary {
  input_data: unknown;
  output_data: unknown;
  node_states: NodeState[];
  graph_snapshot: GraphSnapshot;
  /** Every POST of this execution's failure to the process's error webhook, oldest first. */
  error_webhook_deliveries: ErrorWebhookDelivery[];
}

/** One attempt to deliver an execution's failure to its error webhook. */
export interface ErrorWebhookDelivery {
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'abandoned';
  http_status: number | null;
  error: string | null;
  attempted_at: string;
  next_attempt_at: string | null;
}

export interface ExecutionPage {
  items: ExecutionSummary[];
  page: number;
  pageSize: number;
  total: number;
}

export interface FailureBreakdownEntry {
  count: number;
  node_id?: string;
  node_name?: string;
  error_message?: string;
}

export interface ExecutionStats {
  process_id: string;
  total_runs: number;
  running: number;
  completed: number;
  failed: number;
  timeout: number;
  cancelled: number;
  /** completed / finished runs, a fraction of 1 (0 when nothing finished). */
  success_rate: number;
  average_duration_seconds: number;
  p95_duration_seconds: number;
  failure_breakdown: { by_node: FailureBreakdownEntry[]; by_error: FailureBreakdownEntry[] };
}

/** Body POSTed to a process's error_webhook_url when an execution fails for good. */
export interface ErrorWebhookPayload {
  processId: string;
  executionId: string;
  status: ExecutionStatus;
  error: string;
  failedNode: { id: string; name: string; type: string; error: string } | null;
  attempt: number;
  traceId: string | null;
}
