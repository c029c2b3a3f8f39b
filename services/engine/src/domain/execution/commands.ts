import type { GraphSnapshot, IterationPath, NodeInputSource, TokenUsage } from '@weft/contracts';
import type { ExecutionAcceptedData, ExecutionStartedData, FailedNodeInfo } from './events.js';

/** Commands on an execution; the adapter fills `metadata.now`, the domain never reads a clock. */
export interface CommandMetadata {
  now: Date;
}

interface NodeRef {
  nodeId: string;
  iteration?: IterationPath;
}

/** A node's start recorded with its end (no StartNode before): what NodeStarted would have held. */
export interface NodeStart {
  nodeName: string;
  nodeType: string;
  inputFrom: NodeInputSource[];
  startedAt: Date;
}

export type ExecutionCommand =
  | { type: 'AcceptExecution'; data: Omit<ExecutionAcceptedData, 'acceptedAt'>; metadata: CommandMetadata }
  | {
      type: 'StartExecution';
      /** The graph itself: its ExecutionStarted names it by id (the engine records it once, `GraphSnapshotRecorded`). */
      data: Omit<ExecutionStartedData, 'startedAt' | 'graphSnapshotId' | 'graphSnapshot'> & {
        graphSnapshot: GraphSnapshot;
      };
      metadata: CommandMetadata;
    }
  | {
      type: 'StartNode';
      data: NodeRef & { nodeName: string; nodeType: string; inputFrom: NodeInputSource[]; loopItem?: unknown };
      metadata: CommandMetadata;
    }
  | {
      type: 'CompleteNode';
      data: NodeRef & {
        outputData: unknown;
        handles: string[];
        durationMs: number;
        tokenUsage?: TokenUsage;
        start?: NodeStart;
      };
      metadata: CommandMetadata;
    }
  | {
      type: 'FailNode';
      data: NodeRef & { error: string; durationMs: number; start?: NodeStart };
      metadata: CommandMetadata;
    }
  | { type: 'SkipNode'; data: NodeRef & { nodeName: string; nodeType: string }; metadata: CommandMetadata }
  | { type: 'ScheduleRetry'; data: { retryAt: Date }; metadata: CommandMetadata }
  | { type: 'CompleteExecution'; data: { outputData: Record<string, unknown> }; metadata: CommandMetadata }
  | {
      type: 'FailExecution';
      data: { errorMessage: string; failedNode: FailedNodeInfo | null };
      metadata: CommandMetadata;
    }
  | { type: 'TimeOutExecution'; data: Record<string, never>; metadata: CommandMetadata }
  | { type: 'CancelExecution'; data: { cancelledByUserId: string | null }; metadata: CommandMetadata }
  | { type: 'ResumeExecution'; data: Record<string, never>; metadata: CommandMetadata }
  | { type: 'ParkExecution'; data: { dueAt: Date }; metadata: CommandMetadata }
  | {
      type: 'RecordErrorWebhookAttempt';
      data: {
        outcome: 'delivered' | 'retrying' | 'abandoned';
        httpStatus: number | null;
        error: string | null;
        nextAttemptAt: Date | null;
      };
      metadata: CommandMetadata;
    };
