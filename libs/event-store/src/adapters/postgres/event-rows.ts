import type { EventMetadata, StoredEvent } from '../../event-store.js';

/** The `events` columns every read selects. */
export const EVENT_COLUMNS = [
  'position',
  'stream_id',
  'stream_version',
  'event_id',
  'type',
  'schema_version',
  'data',
  'metadata',
  'recorded_at',
] as const;

export interface EventRow {
  position: string | number;
  stream_id: string;
  stream_version: number;
  event_id: string;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: EventMetadata | null;
  recorded_at: Date | string;
}

// pg returns bigint as a string; positions stay far below 2^53.
export const toStoredEvent = (row: EventRow): StoredEvent => ({
  eventId: row.event_id,
  streamId: row.stream_id,
  streamVersion: Number(row.stream_version),
  position: Number(row.position),
  type: row.type,
  schemaVersion: Number(row.schema_version),
  data: row.data,
  metadata: row.metadata ?? {},
  recordedAt: row.recorded_at instanceof Date ? row.recorded_at : new Date(row.recorded_at),
});
