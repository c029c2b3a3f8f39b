import { sql } from 'kysely';
import type { EventMetadata, StoredEvent } from '../../event-store.js';
import { rememberAppendedJson } from './appended-json.js';

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

/** The same columns with data and metadata as JSON text (`::text`: pg does not parse it). */
export const EVENT_COLUMNS_AS_TEXT = [
  ...EVENT_COLUMNS.filter((column) => column !== 'data' && column !== 'metadata'),
  sql<string | null>`data::text`.as('data'),
  sql<string | null>`metadata::text`.as('metadata'),
];

export interface EventTextRow extends Omit<EventRow, 'data' | 'metadata'> {
  data: string | null;
  metadata: string | null;
}

/**
 * A stored event whose data and metadata are parsed from their JSON text only when first read;
 * the texts are kept for `envelopeJson`. What the outbox relay reads: it publishes the texts and
 * mostly never looks inside (an upcaster that applies reads the data, and its event is new).
 */
export function toStoredEventParsedLazily(
  row: EventTextRow,
  parseMetadata: (text: string) => EventMetadata = parseMetadataText,
): StoredEvent {
  // SQL NULL is what toStoredEvent reads as null data and empty metadata.
  const dataText = row.data ?? 'null';
  const metadataText = row.metadata === null || row.metadata === 'null' ? '{}' : row.metadata;
  let data: { value: unknown } | undefined;
  let metadata: EventMetadata | undefined;
  // The columns as toStoredEvent maps them, written out again: spreading a shared mapping would
  // cost the relay a second object per event, and data and metadata must stay getters.
  const event: StoredEvent = {
    eventId: row.event_id,
    streamId: row.stream_id,
    streamVersion: Number(row.stream_version),
    position: Number(row.position),
    type: row.type,
    schemaVersion: Number(row.schema_version),
    get data(): unknown {
      data ??= { value: JSON.parse(dataText) as unknown };
      return data.value;
    },
    get metadata(): EventMetadata {
      metadata ??= parseMetadata(metadataText);
      return metadata;
    },
    recordedAt: row.recorded_at instanceof Date ? row.recorded_at : new Date(row.recorded_at),
  };
  // jsonb writes numbers without an exponent (1e21 as 22 digits, 5e-324 as 326 characters): such
  // a text could be many times the compact JSON, so it is published compact, as JavaScript writes it.
  if (!LONG_DIGIT_RUN.test(dataText) && !LONG_DIGIT_RUN.test(metadataText))
    rememberAppendedJson(event, dataText, metadataText);
  return event;
}

const parseMetadataText = (text: string): EventMetadata => JSON.parse(text) as EventMetadata;

/**
 * Parses metadata texts, reusing the previous parse for an equal text: a run's events, next to
 * each other in a read, carry the same metadata, and the relay reads every event's (its subject
 * names the organization and process) in the order it read them. Events of one read may share the
 * parsed object: read-only, like every event a read returns.
 */
export function metadataParserOfOneRead(): (text: string) => EventMetadata {
  let lastText: string | undefined;
  let last: EventMetadata = {};
  return (text) => {
    if (text !== lastText) {
      last = parseMetadataText(text);
      lastText = text;
    }
    return last;
  };
}

/** 22 digits: the shortest number JavaScript writes with an exponent and jsonb without (1e21). */
const LONG_DIGIT_RUN = /\d{22}/;
