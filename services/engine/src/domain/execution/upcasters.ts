import type { ExecutionStartedData, NodeStartedData } from '@weft/contracts';
import { graphSnapshotId } from '../graph/graph-snapshot-ids.js';
import type { EventStore, Upcasters } from '@weft/event-store';

/** NodeStarted as schema version 1 stored it: a copy of the whole input. */
export interface NodeStartedDataV1 extends Omit<NodeStartedData, 'inputFrom' | 'loopItem' | 'loopItemRef'> {
  inputData: unknown;
}

/**
 * Version 1 to 2. NodeStarted: the copied input stays as `inputData` (readers use it when present)
 * and no references are known. ExecutionStarted, NodeCompleted, ExecutionCompleted: version 2 only
 * added the optional `<field>Ref`, so their version 1 data is already valid version 2 data.
 * NodeCompleted version 3 and NodeFailed version 2 only added the optional carried start
 * (`CarriedNodeStart`): older data is valid as it is.
 */
export const upcastNodeStartedV1 = (data: NodeStartedDataV1): NodeStartedData => ({ ...data, inputFrom: [] });

/**
 * Version 2 to 3. ExecutionStarted: the graph it carries stays (`graphSnapshot`, which readers
 * use when present) and gets its id, so every reader finds a start's graph by id.
 */
export const upcastExecutionStartedV2 = (data: ExecutionStartedData): ExecutionStartedData =>
  data.graphSnapshot && data.graphSnapshotId === undefined
    ? { ...data, graphSnapshotId: graphSnapshotId(data.graphSnapshot) }
    : data;

const unchanged = <T>(data: T): T => data;

export const executionUpcasters: Upcasters = {
  NodeStarted: { 1: upcastNodeStartedV1 },
  ExecutionStarted: { 1: unchanged, 2: upcastExecutionStartedV2 },
  NodeCompleted: { 1: unchanged, 2: unchanged },
  NodeFailed: { 1: unchanged },
  ExecutionCompleted: { 1: unchanged },
};

const registered = new WeakSet<EventStore>();

/** Once per store: several engines (replicas in tests) may share one. */
export function registerExecutionUpcasters(store: EventStore): void {
  if (registered.has(store)) return;
  registered.add(store);
  store.registerUpcasters(executionUpcasters);
}
