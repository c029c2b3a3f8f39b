import { sql, type RawBuilder } from 'kysely';
import { rememberAppendedJson } from './appended-json.js';
import { jsonRecordsetFor } from './json-recordset.js';
import { WrongExpectedVersionError, type ExpectedVersion, type StoredEvent } from '../../event-store.js';

/** A stream whose version the append statement checks: `s` must be at version `v` (`x` as the caller said it). */
export interface VersionCheck {
  s: string;
  v: number;
  x: ExpectedVersion;
}

/** What the append statement returns per event: what the database assigned. */
export interface AppendedRow {
  position: string | number;
  stream_id: string;
  stream_version: number;
  recorded_at: Date | string;
}

/**
 * SQLSTATE the statement raises (through `weft_wrong_expected_version`, event-store migration 0003-append-checks)
 * when a checked stream is not at its expected version: the statement fails, so the caller's
 * transaction rolls back whatever else it wrote, also when its COMMIT was sent with it.
 */
export const WRONG_EXPECTED_VERSION_SQLSTATE = 'WV409';

export interface AppendStatementOptions {
  /** A transaction setting the lock statement sets: the statement refuses to run without it. */
  lockedBy?: string;
  /**
   * Whether the outbox relay may publish `event`: only then are the texts sent kept for it
   * (`rememberAppendedJson`); default every event.
   */
  publishable?: (event: StoredEvent) => boolean;
}

/**
 * One statement per batch whatever its size: the expected-version checks, the insert and the
 * caller's other writes (`alongside`, as CTEs: they must not depend on each other or on the new
 * rows). The rows travel as one JSON array parameter (data and metadata nested, so stringified
 * once, and parsed once unless the batch is very large: json-recordset.ts), and only what the
 * database assigns (position, recorded_at) comes back; the rest of each stored event is already
 * in hand (the recordset reads JSON null as SQL NULL, so `data: null` is put back as jsonb null). ORDER BY keeps identity positions in batch order; the (stream, version)
 * key maps them back. A failed check inserts nothing and fails the statement.
 */
export function appendStatement(
  events: readonly StoredEvent[],
  checks: readonly VersionCheck[],
  alongside: readonly RawBuilder<unknown>[],
  options: AppendStatementOptions = {},
): RawBuilder<AppendedRow> {
  const keepsJson = (event: StoredEvent): boolean => options.publishable?.(event) ?? true;
  const returning = sql`RETURNING position, stream_id, stream_version, recorded_at`;
  if (!textIsFixed(checks, alongside)) {
    return sql<AppendedRow>`
      INSERT INTO events (stream_id, stream_version, event_id, type, schema_version, data, metadata)
      VALUES ${sql.join(
        events.map((event) => {
          const data = jsonTextOf(event.data);
          const metadata = jsonTextOf(event.metadata);
          if (data !== undefined && metadata !== undefined && keepsJson(event))
            rememberAppendedJson(event, data, metadata);
          return sql`(${event.streamId}, ${event.streamVersion}, ${event.eventId}, ${event.type}, ${event.schemaVersion}, ${data}, ${metadata})`;
        }),
      )}
      ${returning}`;
  }
  const { metadata, indexOf } = distinctMetadata(events);
  // Each row's JSON written out (what JSON.stringify of {d, e, i, k, n, s, t, v} gives) so that
  // its data's text is kept for the relay. Keys in jsonb's order (same length, so by their
  // bytes): PostgreSQL finds them sorted when it parses.
  const rowsJson = `[${events
    .map((event, index) => {
      const data = jsonTextOf(event.data);
      const rest = `"e":${JSON.stringify(event.eventId)},"i":${index},"k":${indexOf[index]},"n":${JSON.stringify(event.schemaVersion)},"s":${JSON.stringify(event.streamId)},"t":${JSON.stringify(event.type)},"v":${JSON.stringify(event.streamVersion)}}`;
      // No text (a value JSON cannot hold): the key is left out, as JSON.stringify leaves it out.
      if (data === undefined) return `{${rest}`;
      if (keepsJson(event)) rememberAppendedJson(event, data, metadata[indexOf[index] as number] as string);
      return `{"d":${data},${rest}`;
    })
    .join(',')}]`;
  const { fn, type } = jsonRecordsetFor(rowsJson);
  // Each distinct metadata travels (and is parsed to jsonb) once: a run's events share theirs.
  const insert = sql`
    INSERT INTO events (stream_id, stream_version, event_id, type, schema_version, data, metadata)
    SELECT r.s, r.v, r.e, r.t, r.n, coalesce(r.d::jsonb, 'null'::jsonb), meta.m
    FROM ${sql.raw(fn)}(${rowsJson}::${sql.raw(type)})
      AS r(i integer, s text, v integer, e uuid, t text, n integer, d ${sql.raw(type)}, k integer)
    JOIN (SELECT (ordinality - 1)::integer AS k, value AS m
          FROM jsonb_array_elements(${`[${metadata.join(',')}]`}::jsonb) WITH ORDINALITY) AS meta ON meta.k = r.k`;
  const others = alongside.map((write, index) => sql`, ${sql.raw(`w${index}`)} AS (${write})`);
  // The failed checks' rows call the raising function: the statement has run every CTE by then,
  // and the error rolls all of it back.
  return sql<AppendedRow>`
    WITH bad AS (
      SELECT c.s, c.v, (SELECT coalesce(max(e.stream_version), 0) FROM events e WHERE e.stream_id = c.s) AS actual
      FROM json_to_recordset(${JSON.stringify(checks.map(({ s, v }) => ({ s, v })))}::json) AS c(s text, v integer)
    ), failed AS (
      SELECT s, v, actual FROM bad WHERE actual <> v
    ), ins AS (
      ${insert} WHERE NOT EXISTS (SELECT 1 FROM failed) ORDER BY r.i ${returning}
    )${sql.join(others, sql``)}
    SELECT position, stream_id, stream_version, recorded_at FROM ins
    UNION ALL
    SELECT NULL::bigint, s, weft_wrong_expected_version(s, v, actual), NULL::timestamptz FROM failed
    UNION ALL
    SELECT NULL::bigint, NULL, weft_append_refused('not one row per event'), NULL::timestamptz
    WHERE NOT EXISTS (SELECT 1 FROM failed) AND (SELECT count(*) FROM ins) <> ${events.length}${
      // Sent behind the lock statement without waiting for its answer: never runs without the lock.
      options.lockedBy
        ? sql`
    UNION ALL
    SELECT NULL::bigint, NULL, weft_append_refused('not under the append lock'), NULL::timestamptz
    WHERE current_setting(${options.lockedBy}, true) IS DISTINCT FROM 'on'`
        : sql``
    }`;
}

/**
 * Whether the statement's text is the same for every batch with these kinds of checks and writes
 * (all values parameters: it can be a prepared statement). Nothing to check or add (an append with
 * versions read first, e.g. one command's events) takes a plain multi-row VALUES instead, whose
 * text grows with the batch: it plans faster than the recordset for a few rows.
 */
export function textIsFixed(checks: readonly VersionCheck[], alongside: readonly RawBuilder<unknown>[]): boolean {
  return checks.length > 0 || alongside.length > 0;
}

/** The batch's distinct metadata as JSON texts, and each event's index among them (same object, or same text, same index). */
function distinctMetadata(events: readonly StoredEvent[]): { metadata: string[]; indexOf: number[] } {
  const metadata: string[] = [];
  const byObject = new Map<object, number>();
  const byText = new Map<string, number>();
  const indexOf = events.map((event) => {
    const known = byObject.get(event.metadata);
    if (known !== undefined) return known;
    const text = JSON.stringify(event.metadata) as string | undefined;
    if (text === undefined) throw new Error(`the metadata of ${event.streamId}@${event.streamVersion} is not JSON`);
    let index = byText.get(text);
    if (index === undefined) {
      index = metadata.push(text) - 1;
      byText.set(text, index);
    }
    byObject.set(event.metadata, index);
    return index;
  });
  return { metadata, indexOf };
}

/** JSON text of a value; undefined for one JSON has no text for (undefined, a function). */
const jsonTextOf = (value: unknown): string | undefined => JSON.stringify(value);

/** Fills in each event's position and recorded_at from the statement's rows. */
export function assignPositions(events: readonly StoredEvent[], rows: readonly AppendedRow[]): void {
  const byKey = new Map(events.map((event) => [`${event.streamVersion}\u0000${event.streamId}`, event]));
  for (const row of rows) {
    const event = byKey.get(`${Number(row.stream_version)}\u0000${row.stream_id}`);
    if (!event) throw new Error(`append returned an unknown row ${row.stream_id}@${row.stream_version}`);
    event.position = Number(row.position);
    event.recordedAt = row.recorded_at instanceof Date ? row.recorded_at : new Date(row.recorded_at);
  }
  if (rows.length !== events.length) throw new Error(`append stored ${rows.length} of ${events.length} events`);
}

/**
 * The error an append reports: a failed version check, or a unique violation on (stream,
 * version) (a lost race), as WrongExpectedVersionError; anything else as it is.
 */
export function appendErrorOf(
  error: unknown,
  events: readonly StoredEvent[],
  checks: readonly VersionCheck[],
): unknown {
  const pgError = error as { code?: string; constraint?: string; message?: string; detail?: string };
  if (pgError.code === WRONG_EXPECTED_VERSION_SQLSTATE) {
    const { s, a } = JSON.parse(pgError.detail ?? '{}') as { s?: string; a?: number };
    const check = checks.find((candidate) => candidate.s === s);
    return new WrongExpectedVersionError(s ?? '', check?.x ?? 'any', Number(a));
  }
  const onStreamVersion =
    pgError.code === '23505' &&
    (pgError.constraint ?? pgError.message ?? '').includes('events_stream_id_stream_version_key');
  if (!onStreamVersion) return error;
  const [first] = events;
  return new WrongExpectedVersionError(first?.streamId ?? '', (first?.streamVersion ?? 1) - 1, -1);
}
