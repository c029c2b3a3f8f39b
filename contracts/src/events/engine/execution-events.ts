import type { GraphSnapshot, TokenUsage } from '../../engine/execution-record.js';

/**
 * Events of the execution aggregate (stream `execution-<executionId>`); each type's schema version
 * is in `executionEventSchemas`. Stored by the engine and published on
 * weft.events.execution.<org>.<process>.<type>.
 */
export const EXECUTION_EVENT_SCHEMA_VERSION = 1;

/** Where a node ran inside loop bodies: one entry per enclosing loop, outermost first. */
export type IterationPath = { loopNodeId: string; index: number }[];

/**
 * A value too large to travel inline (over WEFT_EVENT_VALUE_INLINE_MAX_BYTES): its JSON text is in
 * blob storage. The field it stands for is then absent and `<field>Ref` holds this.
 */
export interface StoredValueRef {
  /** `weft-blob://<key>` of the value's JSON text. */
  url: string;
  /** Bytes of that JSON text. */
  size: number;
}

/**
 * A parent run whose input and output make up a node's input (DESIGN.md: the merge of the parents'
 * inputs plus each parent's output under its label). `iteration` is the parent run's loop
 * iterations; absent at the top level.
 */
export interface NodeInputSource {
  nodeId: string;
  iteration?: IterationPath;
  /**
   * The parent's output handle when that handle carries one key of the parent's output (a
   * schematizationNode's block handles): the input holds that key's value, not the whole output.
   */
  handle?: string;
}

/**
 * The request was accepted (its id handed out) and waits in the engine's work queue: the record
 * reads `running` with `queued: true` until ExecutionStarted, and a cancel before then holds.
 */
export interface ExecutionAcceptedData {
  executionId: string;
  processId: string;
  organizationId: string;
  triggerNodeId: string;
  triggeredByUserId: string | null;
  source: string;
  acceptedAt: string;
}

export interface ExecutionStartedData {
  executionId: string;
  processId: string;
  organizationId: string;
  processRevision: number;
  triggerNodeId: string;
  /** The trigger's data; absent when stored in blob storage (`inputDataRef`). */
  inputData: unknown;
  inputDataRef?: StoredValueRef;
  /**
   * Schema version 3: the graph the execution runs, by id; it is recorded once, in a
   * `GraphSnapshotRecorded` event (graph-snapshot-events.ts) committed no later than this event.
   * Events stored at version 2 or earlier carry the graph itself (`graphSnapshot`) and, read back
   * (upcast), its id too.
   */
  graphSnapshotId: string;
  /** Version 2 and earlier only: the graph itself. */
  graphSnapshot?: GraphSnapshot;
  triggeredByUserId: string | null;
  source: string;
  timeoutSeconds: number;
  maxRetries: number;
  errorWebhookUrl: string | null;
  startedAt: string;
}

/**
 * Schema version 2: the input is recorded as references (`inputFrom`, plus the loop item for a
 * body node fed by its loop), never as a copy; the read model and a resumed run rebuild it.
 */
export interface NodeStartedData {
  executionId: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  /** The active parents' runs, in edge order; empty for the trigger node. */
  inputFrom: NodeInputSource[];
  /** A loop body node fed by its loop's `start` handle: the item (or `loopItemRef`) it sees. */
  loopItem?: unknown;
  loopItemRef?: StoredValueRef;
  /** Version 1 events only (upcast): the input as it was copied then. */
  inputData?: unknown;
  attempt: number;
  startedAt: string;
  iteration?: IterationPath;
}

/**
 * A node's start, carried by its NodeCompleted (schema version 3) or NodeFailed (version 2) when
 * no NodeStarted was recorded for that run: nodes that touch nothing outside the execution (input,
 * conditional, script, output) and end within a second record one event, not two. All present or
 * all absent; absent when a NodeStarted came first.
 */
export interface CarriedNodeStart {
  nodeName?: string;
  nodeType?: string;
  inputFrom?: NodeInputSource[];
  attempt?: number;
  startedAt?: string;
}

export interface NodeCompletedData extends CarriedNodeStart {
  executionId: string;
  nodeId: string;
  /** Absent when stored in blob storage (`outputDataRef`). */
  outputData?: unknown;
  outputDataRef?: StoredValueRef;
  /** Output handles that fired; children on other handles are skipped. */
  handles: string[];
  completedAt: string;
  durationMs: number;
  iteration?: IterationPath;
  /** Set by nodes that call a language model: what the run spent. */
  tokenUsage?: TokenUsage;
}

export interface NodeFailedData extends CarriedNodeStart {
  executionId: string;
  nodeId: string;
  error: string;
  completedAt: string;
  durationMs: number;
  iteration?: IterationPath;
}

export interface NodeSkippedData {
  executionId: string;
  nodeId: string;
  nodeName: string;
  nodeType: string;
  skippedAt: string;
  iteration?: IterationPath;
}

export interface ExecutionRetryScheduledData {
  executionId: string;
  /** The attempt that will run next (2 for the first retry). */
  attempt: number;
  failedNodeId: string;
  error: string;
  retryAt: string;
}

export interface ExecutionCompletedData {
  executionId: string;
  /** Absent when stored in blob storage (`outputDataRef`). */
  outputData?: Record<string, unknown>;
  outputDataRef?: StoredValueRef;
  completedAt: string;
  durationSeconds: number;
}

export interface FailedNodeInfo {
  id: string;
  name: string;
  type: string;
  error: string;
}

export interface ExecutionFailedData {
  executionId: string;
  errorMessage: string;
  failedNode: FailedNodeInfo | null;
  attempt: number;
  completedAt: string;
  durationSeconds: number;
  /** Set when the execution's request failed this many deliveries and could never start. */
  deliveryCount?: number;
}

export interface ExecutionTimedOutData {
  executionId: string;
  errorMessage: string;
  completedAt: string;
  durationSeconds: number;
}

export interface ExecutionCancelledData {
  executionId: string;
  cancelledByUserId: string | null;
  completedAt: string;
  durationSeconds: number;
}

/** An engine picked the execution up from its events (its previous engine died or stopped). */
export interface ExecutionResumedData {
  executionId: string;
  /** Node ids (run keys inside loops) that had started and not finished when it was resumed. */
  runningNodeIds: string[];
  resumedAt: string;
}

/** Every running node is a long wait: the execution is unloaded until `dueAt`, then resumed. */
export interface ExecutionParkedData {
  executionId: string;
  parkedAt: string;
  dueAt: string;
}

/** The failure is to be POSTed to the process's error webhook (recorded with the terminal event). */
export interface ErrorWebhookDeliveryScheduledData {
  executionId: string;
  scheduledAt: string;
}

/** One POST to the error webhook: delivered, retried at `nextAttemptAt`, or abandoned. */
export interface ErrorWebhookDeliveryAttemptedData {
  executionId: string;
  attempt: number;
  outcome: 'delivered' | 'retrying' | 'abandoned';
  httpStatus: number | null;
  error: string | null;
  attemptedAt: string;
  nextAttemptAt: string | null;
}

export type ExecutionEvent =
  | { type: 'ExecutionAccepted'; data: ExecutionAcceptedData }
  | { type: 'ExecutionStarted'; data: ExecutionStartedData }
  | { type: 'NodeStarted'; data: NodeStartedData }
  | { type: 'NodeCompleted'; data: NodeCompletedData }
  | { type: 'NodeFailed'; data: NodeFailedData }
  | { type: 'NodeSkipped'; data: NodeSkippedData }
  | { type: 'ExecutionRetryScheduled'; data: ExecutionRetryScheduledData }
  | { type: 'ExecutionCompleted'; data: ExecutionCompletedData }
  | { type: 'ExecutionFailed'; data: ExecutionFailedData }
  | { type: 'ExecutionTimedOut'; data: ExecutionTimedOutData }
  | { type: 'ExecutionCancelled'; data: ExecutionCancelledData }
  | { type: 'ExecutionResumed'; data: ExecutionResumedData }
  | { type: 'ExecutionParked'; data: ExecutionParkedData }
  | { type: 'ErrorWebhookDeliveryScheduled'; data: ErrorWebhookDeliveryScheduledData }
  | { type: 'ErrorWebhookDeliveryAttempted'; data: ErrorWebhookDeliveryAttemptedData };

export type ExecutionEventType = ExecutionEvent['type'];

export const EXECUTION_EVENT_TYPES: readonly ExecutionEventType[] = [
  'ExecutionAccepted',
  'ExecutionStarted',
  'NodeStarted',
  'NodeCompleted',
  'NodeFailed',
  'NodeSkipped',
  'ExecutionRetryScheduled',
  'ExecutionCompleted',
  'ExecutionFailed',
  'ExecutionTimedOut',
  'ExecutionCancelled',
  'ExecutionResumed',
  'ExecutionParked',
  'ErrorWebhookDeliveryScheduled',
  'ErrorWebhookDeliveryAttempted',
];

/** Events after which the execution no longer runs. */
export const TERMINAL_EXECUTION_EVENTS: readonly ExecutionEventType[] = [
  'ExecutionCompleted',
  'ExecutionFailed',
  'ExecutionTimedOut',
  'ExecutionCancelled',
];
