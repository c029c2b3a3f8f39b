import type { IterationPath, NodeInputSource } from '@weft/contracts';
import type { StoredEvent } from '@weft/event-store';

/** A node run's start as the events record it: a NodeStarted, or the start its end carries. */
export interface RecordedStart {
  nodeId: string;
  nodeName: string;
  attempt: number;
  startedAt: string;
  inputFrom: NodeInputSource[];
  iteration?: IterationPath;
  /** The event holding it: NodeStarted, or the NodeCompleted or NodeFailed that carries it. */
  event: StoredEvent;
}

/** Every start recorded in `events`, in order; with `nodeId`, only that node's. */
export function recordedStarts(events: readonly StoredEvent[], nodeId?: string): RecordedStart[] {
  return events.flatMap((event) => {
    const data = event.data as Partial<RecordedStart>;
    const carries =
      event.type === 'NodeStarted' ||
      ((event.type === 'NodeCompleted' || event.type === 'NodeFailed') && data.startedAt !== undefined);
    if (!carries || (nodeId !== undefined && data.nodeId !== nodeId)) return [];
    return [{ ...(data as Omit<RecordedStart, 'event'>), event }];
  });
}
