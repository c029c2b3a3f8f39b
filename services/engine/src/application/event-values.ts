import { randomUUID } from 'node:crypto';
import { executionEventSchemas, ProblemError, type StoredValueRef } from '@weft/contracts';
import { blobUrlOf } from '@weft/blob-storage';
import type { ExecutionEvent } from '../domain/execution/events.js';
import type { GraphSnapshotRecords } from './graph-snapshot-records.js';

/**
 * How execution events are made fit to store: a value over the inline limit (a node's output, the
 * trigger's data, a loop item) goes to blob storage once and the event carries `<field>Ref`
 * instead; an event still over the event limit is refused, never appended (it would exceed NATS
 * max_payload and could not be published). A resumed run reads the values back.
 */
export interface ValueStore {
  /** Stores a value's JSON text under `key` (its reference's url is `blobUrlOf(key)`). */
  put(key: string, json: string): Promise<void>;
  get(ref: StoredValueRef): Promise<unknown>;
}

export interface EventSizeLimits {
  /** WEFT_EVENT_MAX_BYTES: no larger event is appended. */
  maxEventBytes: number;
  /** WEFT_EVENT_VALUE_INLINE_MAX_BYTES: larger values go to blob storage. */
  valueInlineMaxBytes: number;
  /**
   * WEFT_EVENT_VALUE_MAX_BYTES: no larger value (a node's output, the trigger's data) is kept: the
   * node fails. An execution holds its nodes' outputs for their children, so this bounds the
   * memory one node can make it hold, whatever the node type.
   */
  valueMaxBytes?: number;
}

export const DEFAULT_EVENT_SIZE_LIMITS: EventSizeLimits = {
  maxEventBytes: 4 * 1024 * 1024,
  valueInlineMaxBytes: 256 * 1024,
  valueMaxBytes: 16 * 1024 * 1024,
};

/** A value over WEFT_EVENT_VALUE_MAX_BYTES: refused like an oversize event. */
export class ValueTooLargeError extends ProblemError {
  /** `bytes` undefined: the value's JSON is longer than a JavaScript string can be (about 512 MiB). */
  constructor(type: string, field: string, bytes: number | undefined, max: number) {
    const size = bytes === undefined ? 'larger than a JavaScript string holds' : `of ${bytes} bytes`;
    super(413, `${type} ${field} ${size} exceeds WEFT_EVENT_VALUE_MAX_BYTES (${max} bytes)`);
  }
}

/** JSON of an event's part; undefined when it is longer than a JavaScript string can be. */
function jsonOrTooLong(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

export interface EventStorage {
  limits: EventSizeLimits;
  /** Absent: every value stays inline (and the event limit still applies). */
  values?: ValueStore;
  /**
   * The graphs this engine knows are on record (graph-snapshot-records.ts). Absent: every start
   * records its graph again (correct, but a copy per run).
   */
  graphs?: GraphSnapshotRecords;
}

/** The fields of each event type whose value may be stored as a blob reference (`<field>Ref`). */
const VALUE_FIELDS: Partial<Record<ExecutionEvent['type'], readonly string[]>> = {
  ExecutionStarted: ['inputData'],
  NodeStarted: ['loopItem'],
  NodeCompleted: ['outputData'],
  ExecutionCompleted: ['outputData'],
};

/** An event over WEFT_EVENT_MAX_BYTES: refused before anything is recorded. */
export class EventTooLargeError extends ProblemError {
  constructor(type: string, bytes: number, max: number) {
    super(413, `${type} event of ${bytes} bytes exceeds WEFT_EVENT_MAX_BYTES (${max} bytes)`);
  }
}

export interface PreparedEvent {
  type: ExecutionEvent['type'];
  data: Record<string, unknown>;
  schemaVersion: number;
  /** Blob writes that must finish before the event is appended. */
  blobWrites: Promise<void>[];
}

const bytesOf = (json: string): number => Buffer.byteLength(json);

const NO_FIELDS: readonly string[] = [];

/**
 * The event as it is stored; throws EventTooLargeError when it cannot be. Built key by key in the
 * event's own order (a value in blob storage as `<field>Ref` in its field's place), never by
 * deleting keys: an object that lost one is a slow dictionary for every later stringify and read.
 */
export function prepareForStorage(event: ExecutionEvent, storage: EventStorage): PreparedEvent {
  const { limits, values } = storage;
  const source = event.data as unknown as Record<string, unknown>;
  const valueFields = VALUE_FIELDS[event.type] ?? NO_FIELDS;
  const puts: (() => Promise<void>)[] = [];
  const data: Record<string, unknown> = {};
  // The fields measured together as one JSON text; values measured on their own add `measured`.
  const rest: Record<string, unknown> = {};
  let measured = 0;
  for (const field of Object.keys(source)) {
    const value = source[field];
    if (value === undefined || !valueFields.includes(field)) {
      rest[field] = value;
      data[field] = value;
      continue;
    }
    const json = jsonOrTooLong(value);
    const maxValueBytes = limits.valueMaxBytes ?? DEFAULT_EVENT_SIZE_LIMITS.valueMaxBytes!;
    // Outputs that fit one by one can add up to more than a string holds (an execution's outputs).
    if (json === undefined) throw new ValueTooLargeError(event.type, field, undefined, maxValueBytes);
    const bytes = bytesOf(json);
    if (bytes > maxValueBytes) throw new ValueTooLargeError(event.type, field, bytes, maxValueBytes);
    if (bytes > limits.valueInlineMaxBytes && values) {
      const key = `execution-values/${event.data.executionId}/${randomUUID()}.json`;
      const ref: StoredValueRef = { url: blobUrlOf(key), size: bytes };
      rest[`${field}Ref`] = ref;
      data[`${field}Ref`] = ref;
      puts.push(() => values.put(key, json));
    } else {
      measured += bytes + field.length + 4;
      data[field] = value;
    }
  }
  const size = bytesOf(JSON.stringify(rest)) + measured;
  if (size > limits.maxEventBytes) throw new EventTooLargeError(event.type, size, limits.maxEventBytes);
  // Started only once the event is known to fit: a refused event leaves no blob behind.
  const blobWrites = puts.map((put) => put());
  return {
    type: event.type,
    data,
    schemaVersion: executionEventSchemas[event.type].schemaVersion,
    blobWrites,
  };
}

/** The event with every value that went to blob storage read back into its field. */
export async function resolveStoredValues(
  event: ExecutionEvent,
  values: ValueStore | undefined,
): Promise<ExecutionEvent> {
  const fields = VALUE_FIELDS[event.type] ?? [];
  const data = event.data as unknown as Record<string, unknown>;
  const refs = fields.filter((field) => data[`${field}Ref`] !== undefined && data[field] === undefined);
  if (refs.length === 0) return event;
  if (!values) throw new Error(`${event.type} holds a blob reference but no blob storage is configured`);
  const resolved: Record<string, unknown> = { ...data };
  for (const field of refs) resolved[field] = await values.get(data[`${field}Ref`] as StoredValueRef);
  return { type: event.type, data: resolved } as unknown as ExecutionEvent;
}
