import {
  GRAPH_SNAPSHOT_RECORDED,
  graphSnapshotRecordedSchema,
  type GraphSnapshot,
  type GraphSnapshotRecordedData,
} from '@weft/contracts';
import type { EventMetadata, EventStore, StreamAppend } from '@weft/event-store';
import { graphSnapshotStreamId } from '../domain/execution/events.js';
import { graphSnapshotBytes, graphSnapshotId } from '../domain/graph/graph-snapshot-ids.js';
import { DEFAULT_EVENT_SIZE_LIMITS, EventTooLargeError } from './event-values.js';

/**
 * Each graph an execution runs is recorded once (`GraphSnapshotRecorded`, in stream
 * `execution-graph-<processId>-<graphSnapshotId>`) and its ExecutionStarted names it by id: a
 * run's events no longer carry a copy of the graph (2.6 of the 6.5 KB of a five-node run's
 * events, written, parsed as jsonb and published at every run; docs/performance.md).
 *
 * The recording goes in the same commit as the first start that names the graph, before it, so
 * no start is ever on record without its graph. It makes a new stream (`no_stream`: checked by
 * the append statement itself, so the commit stays on the store's fast path); when the stream
 * exists (two engines, or two commits, started the same new graph), the writer commits the start
 * without it (`ExecutionEventWriter.commitAppends`). So each graph is recorded exactly once. This
 * engine remembers the graphs it knows are on record (after their commit, never before: a commit
 * that failed recorded nothing), so that their starts carry no recording at all.
 */
export interface GraphRecording {
  /** The GraphSnapshotRecorded append that goes before the start, in the same commit. */
  append: StreamAppend;
  /** Call once that commit succeeded. */
  committed(): void;
}

/** The start a recording is for: the process and revision it ran. */
export interface GraphStart {
  processId: string;
  organizationId: string;
  processRevision: number;
}

/** Bytes of the event around the graph (ids, revision, field names): a bound, not a measure. */
const ENVELOPE_BYTES = 512;

/**
 * The GraphSnapshotRecorded append of `snapshot`, which makes its stream. Throws EventTooLargeError when the event would exceed `maxEventBytes` (it could not be published).
 */
export function graphSnapshotAppend(
  start: GraphStart,
  snapshot: GraphSnapshot,
  metadata: EventMetadata,
  maxEventBytes: number,
): StreamAppend {
  const id = graphSnapshotId(snapshot);
  const bytes = graphSnapshotBytes(snapshot) + ENVELOPE_BYTES;
  if (bytes > maxEventBytes) throw new EventTooLargeError(GRAPH_SNAPSHOT_RECORDED, bytes, maxEventBytes);
  const data: GraphSnapshotRecordedData = {
    graphSnapshotId: id,
    processId: start.processId,
    organizationId: start.organizationId,
    processRevision: start.processRevision,
    graphSnapshot: snapshot,
  };
  return {
    streamId: graphSnapshotStreamId(start.processId, id),
    events: [
      { type: GRAPH_SNAPSHOT_RECORDED, data, metadata, schemaVersion: graphSnapshotRecordedSchema.schemaVersion },
    ],
    expectedVersion: 'no_stream',
  };
}

export class GraphSnapshotRecords {
  /**
   * Stream ids of graphs known to be on record, least recently used first. Ids only: a graph
   * may be megabytes, and only a resume (rare) reads one back.
   */
  private readonly recorded = new Set<string>();

  constructor(
    private readonly store?: Pick<EventStore, 'readStream'>,
    private readonly maxEventBytes = DEFAULT_EVENT_SIZE_LIMITS.maxEventBytes,
    /** Stream ids of about 120 bytes: 10,000 are about 1 MiB. */
    private readonly maxRemembered = 10_000,
  ) {}

  /**
   * The recording a start of `snapshot` needs; undefined when this engine knows the graph is on
   * record. Throws EventTooLargeError, before anything is written, when the graph's event would
   * exceed WEFT_EVENT_MAX_BYTES (it could not be published).
   */
  recordingFor(start: GraphStart, snapshot: GraphSnapshot, metadata: EventMetadata): GraphRecording | undefined {
    const streamId = graphSnapshotStreamId(start.processId, graphSnapshotId(snapshot));
    if (this.touch(streamId)) return undefined;
    const append = graphSnapshotAppend(start, snapshot, metadata, this.maxEventBytes);
    return { append, committed: () => this.remember(streamId) };
  }

  /** The graph `graphSnapshotId` of `processId` as recorded (a resumed run's), read from its stream. */
  async load(processId: string, id: string): Promise<GraphSnapshot> {
    const streamId = graphSnapshotStreamId(processId, id);
    if (!this.store) throw new Error(`graph snapshot ${id} cannot be read: no event store`);
    const events = await this.store.readStream(streamId);
    const recorded = events.find((event) => event.type === GRAPH_SNAPSHOT_RECORDED);
    if (!recorded) throw new Error(`graph snapshot ${id} of process ${processId} is not on record`);
    this.remember(streamId);
    return (recorded.data as GraphSnapshotRecordedData).graphSnapshot;
  }

  /** Whether the graph of `streamId` is remembered (then it becomes the most recently used). */
  private touch(streamId: string): boolean {
    if (!this.recorded.delete(streamId)) return false;
    this.recorded.add(streamId);
    return true;
  }

  private remember(streamId: string): void {
    this.recorded.delete(streamId);
    this.recorded.add(streamId);
    if (this.recorded.size > this.maxRemembered) this.recorded.delete(this.recorded.values().next().value as string);
  }
}
