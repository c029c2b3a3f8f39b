/** The execution aggregate's events: the public contract lives in @weft/contracts (events/engine). */
export type {
  ExecutionAcceptedData,
  ExecutionEvent,
  ExecutionEventType,
  ExecutionStartedData,
  FailedNodeInfo,
  IterationPath,
} from '@weft/contracts';
export { EXECUTION_EVENT_TYPES, TERMINAL_EXECUTION_EVENTS } from '@weft/contracts';

/** Stream of one execution. */
export const executionStreamId = (executionId: string): string => `execution-${executionId}`;

/** Stream of one graph an execution ran, recorded once (`GraphSnapshotRecorded`); its category is `execution`. */
export const graphSnapshotStreamId = (processId: string, graphSnapshotId: string): string =>
  `execution-graph-${processId}-${graphSnapshotId}`;
