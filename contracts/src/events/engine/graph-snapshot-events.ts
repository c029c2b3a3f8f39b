import type { GraphSnapshot } from '../../engine/execution-record.js';
import type { JsonSchema } from '../../http/http-route.js';

/**
 * A process revision's graph as the engine ran it, recorded once: every `ExecutionStarted` of
 * that graph names it by `graphSnapshotId` instead of carrying a copy (schema version 3). Stream
 * `execution-graph-<processId>-<graphSnapshotId>`, its only event, appended in the same commit as
 * the first ExecutionStarted that names it. Published, like execution events, on
 * weft.events.execution.<org>.<process>.GraphSnapshotRecorded, before any start that names it.
 */
export interface GraphSnapshotRecordedData {
  /** SHA-256 (base64url) of the graph's canonical JSON (keys sorted): equal graphs, equal ids. */
  graphSnapshotId: string;
  processId: string;
  organizationId: string;
  /** The process revision the graph was first recorded for (an equal graph of a later revision keeps this one). */
  processRevision: number;
  graphSnapshot: GraphSnapshot;
}

export const GRAPH_SNAPSHOT_RECORDED = 'GraphSnapshotRecorded';

export const graphSnapshotRecordedSchema: { schemaVersion: number; schema: JsonSchema } = {
  schemaVersion: 1,
  schema: {
    type: 'object',
    required: ['graphSnapshotId', 'processId', 'organizationId', 'processRevision', 'graphSnapshot'],
    properties: {
      graphSnapshotId: { type: 'string', minLength: 1 },
      processId: { type: 'string', minLength: 1 },
      organizationId: { type: 'string', minLength: 1 },
      processRevision: { type: 'integer', minimum: 0 },
      graphSnapshot: { type: 'object', required: ['nodes', 'edges'] },
    },
  },
};
