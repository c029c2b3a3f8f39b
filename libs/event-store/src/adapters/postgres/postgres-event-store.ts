import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { currentTraceId } from '@weft/observability';
import type {
  AppendOptions,
  AppendResult,
  EventMetadata,
  Db,
  EventStore,
  NewEvent,
  Projection,
  ReadAllOptions,
  StoredEvent,
  StreamAppend,
  SubscribeOptions,
  SubscriptionHandle,
  Trx,
  Upcasters,
} from '../../event-store.js';
import { WrongExpectedVersionError } from '../../event-store.js';
import { AppendSignal } from '../../subscriptions/append-signal.js';
import { startSubscription } from '../../subscriptions/catch-up-subscription.js';
import { mergeUpcasters, upcastEvent } from '../../upcasting.js';
import { EVENT_COLUMNS, toStoredEvent, type EventRow } from './event-rows.js';
import { EVENT_STORE_MIGRATIONS_TABLE, eventStoreMigrations } from './event-store-migrations.js';
import { checkExpectedVersion } from './expected-version.js';
import { migrate } from './migrate.js';
import type { Database } from './open-database.js';

/** First key of every advisory lock the store takes; the second is the events table's oid. */
/** Every event carries the trace it was written in, unless the caller named one (DESIGN.md). */
const withTraceId = (metadata: EventMetadata | undefined): EventMetadata => {
  if (metadata?.traceId) return metadata;
  const traceId = currentTraceId();
  return traceId ? { ...metadata, traceId } : (metadata ?? {});
};

export const APPEND_LOCK_NAMESPACE = 0x5745_4654; // 'WEFT'

export interface ReadAllRangeOptions extends ReadAllOptions {
  /** Inclusive upper bound. */
  toPosition?: number;
}

/**
 * The event store on PostgreSQL and PGlite (same SQL). Appends take a transaction-level advisory
 * lock per events table, so positions become visible in commit order and `readAll` never skips
 * an event of a transaction still in flight (simpler than the xid8 high-water mark, and group
 * commit keeps the serialized section short).
 */
export class PostgresEventStore implements EventStore {
  readonly db: Db;
  /** In-process wake-up for catch-up loops; NOTIFY carries it across processes on PostgreSQL. */
  readonly appendSignal = new AppendSignal();
  /** Channel NOTIFY'd at the commit of every append (PostgreSQL only). */
  readonly notifyChannel: string;
  private readonly projections: Projection[] = [];
  private readonly upcasters: Upcasters = {};
  private readonly subscriptions = new Set<SubscriptionHandle>();
  private unlisten: Promise<() => Promise<void>> | undefined;

  private constructor(
    readonly database: Database,
    /** oid of this schema's events table: the second advisory lock key, so schemas never block each other. */
    readonly eventsTableOid: number,
  ) {
    this.db = database.db;
    this.notifyChannel = `weft_events_${database.schema}`;
  }

  /** Migrates the store's tables (idempotent) and returns a store on them. */
  static async open(database: Database): Promise<PostgresEventStore> {
    await migrate(database.db, eventStoreMigrations, EVENT_STORE_MIGRATIONS_TABLE);
    const { rows } = await sql<{ oid: number }>`SELECT 'events'::regclass::oid::int AS oid`.execute(database.db);
    return new PostgresEventStore(database, Number(rows[0]!.oid));
  }

  registerProjections(projections: readonly Projection[]): void {
    this.projections.push(...projections);
  }

  registerUpcasters(upcasters: Upcasters): void {
    mergeUpcasters(this.upcasters, upcasters);
  }

  upcast(event: StoredEvent): StoredEvent {
    return upcastEvent(event, this.upcasters);
  }

  async append(streamId: string, events: NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    const [result] = await this.appendMany([{ streamId, events, expectedVersion: options.expectedVersion }]);
    return result!;
  }

  async appendMany(batch: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results = await this.db.transaction().execute((trx) => this.appendInTransaction(trx, batch));
    this.appendSignal.notify();
    return results;
  }

  /**
   * The append itself, for callers that must write other rows in the same transaction. The caller
   * commits; call `appendSignal.notify()` afterwards to wake in-process subscribers at once.
   */
  async appendInTransaction(trx: Trx, batch: readonly StreamAppend[]): Promise<AppendResult[]> {
    await this.lockAppends(trx);
    const streamIds = [...new Set(batch.map((item) => item.streamId))];
    const versions = await this.currentVersions(trx, streamIds);
    const rows: Record<string, unknown>[] = [];
    const plans = batch.map((item) => {
      const current = versions.get(item.streamId) ?? 0;
      checkExpectedVersion(item.streamId, item.expectedVersion, current);
      const next = current + item.events.length;
      versions.set(item.streamId, next);
      item.events.forEach((event, index) => rows.push(this.toRow(item.streamId, current + index + 1, event)));
      return { count: item.events.length, next };
    });
    const stored = rows.length === 0 ? [] : await this.insert(trx, rows);
    for (const event of stored) {
      for (const projection of this.projections) {
        if (projection.eventTypes.includes(event.type)) await projection.apply(trx, event);
      }
    }
    let offset = 0;
    return plans.map((plan) => {
      const events = stored.slice(offset, offset + plan.count);
      offset += plan.count;
      return { nextExpectedVersion: plan.next, events };
    });
  }

  /**
   * Blocks other appends to this events table until the transaction ends. On PostgreSQL it also
   * queues the NOTIFY that wakes other processes' subscribers at commit (one round trip for both).
   */
  async lockAppends(trx: Trx): Promise<void> {
    // PGlite needs no lock: its dialect already runs one transaction at a time.
    if (this.database.dialect !== 'postgres') return;
    await sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK_NAMESPACE}, ${this.eventsTableOid}), pg_notify(${this.notifyChannel}, '')`.execute(
      trx,
    );
  }

  async readStream(
    streamId: string,
    options: { fromVersion?: number; until?: Date } = {},
    db: Db = this.db,
  ): Promise<StoredEvent[]> {
    let query = db
      .selectFrom('events')
      .select(EVENT_COLUMNS)
      .where('stream_id', '=', streamId)
      .orderBy('stream_version');
    if (options.fromVersion !== undefined) query = query.where('stream_version', '>=', options.fromVersion);
    // recorded_at has microseconds, a Date only milliseconds: `until` covers its whole millisecond.
    if (options.until !== undefined) query = query.where('recorded_at', '<', new Date(options.until.getTime() + 1));
    const rows = (await query.execute()) as EventRow[];
    return rows.map((row) => this.upcast(toStoredEvent(row)));
  }

  async readAll(options: ReadAllRangeOptions = {}, db: Db = this.db): Promise<StoredEvent[]> {
    let query = db
      .selectFrom('events')
      .select(EVENT_COLUMNS)
      .where('position', '>', options.fromPosition ?? 0)
      .orderBy('position');
    if (options.toPosition !== undefined) query = query.where('position', '<=', options.toPosition);
    if (options.eventTypes !== undefined) {
      if (options.eventTypes.length === 0) return [];
      query = query.where('type', 'in', options.eventTypes);
    }
    if (options.limit !== undefined) query = query.limit(options.limit);
    const rows = (await query.execute()) as EventRow[];
    return rows.map((row) => this.upcast(toStoredEvent(row)));
  }

  /**
   * Highest committed position. Appends are serialized, so every event at or below it is
   * committed and visible to any later statement.
   */
  async headPosition(db: Db = this.db): Promise<number> {
    const row = await db
      .selectFrom('events')
      .select((eb) => eb.fn.max('position').as('head'))
      .executeTakeFirst();
    return Number(row?.head ?? 0);
  }

  async streamVersion(streamId: string): Promise<number> {
    return (await this.currentVersions(this.db, [streamId])).get(streamId) ?? 0;
  }

  subscribe(
    name: string,
    handler: (event: StoredEvent) => Promise<void>,
    options: SubscribeOptions = {},
  ): SubscriptionHandle {
    void this.listenForAppends();
    const handle = startSubscription(this, name, handler, options);
    this.subscriptions.add(handle);
    return {
      name,
      waitForPosition: (position) => handle.waitForPosition(position),
      stop: async () => {
        this.subscriptions.delete(handle);
        await handle.stop();
      },
    };
  }

  /**
   * Starts following NOTIFY from other processes, once (PostgreSQL only). Resolves when listening;
   * a failed LISTEN only costs latency, since the loops still poll.
   */
  async listenForAppends(): Promise<void> {
    if (this.database.dialect !== 'postgres') return;
    this.unlisten ??= this.database
      .listen(this.notifyChannel, () => this.appendSignal.notify())
      .then((unlisten) => {
        // Appends between a loop's last read and this moment sent no NOTIFY we heard: re-read once.
        this.appendSignal.notify();
        return unlisten;
      });
    await this.unlisten.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Stops every subscription started here and the NOTIFY listener; the database stays open. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((handle) => handle.stop()));
    this.subscriptions.clear();
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    if (unlisten) await (await unlisten.catch(() => async () => undefined))();
  }

  private async currentVersions(db: Db, streamIds: readonly string[]): Promise<Map<string, number>> {
    if (streamIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('events')
      .select(['stream_id', (eb) => eb.fn.max('stream_version').as('version')])
      .where('stream_id', 'in', streamIds)
      .groupBy('stream_id')
      .execute();
    return new Map(rows.map((row) => [String(row.stream_id), Number(row.version)]));
  }

  private toRow(streamId: string, streamVersion: number, event: NewEvent): Record<string, unknown> {
    return {
      stream_id: streamId,
      stream_version: streamVersion,
      event_id: event.eventId ?? randomUUID(),
      type: event.type,
      schema_version: event.schemaVersion ?? 1,
      // Stringified: pg would turn a top-level array into a PostgreSQL array literal.
      data: JSON.stringify(event.data ?? null),
      metadata: JSON.stringify(withTraceId(event.metadata)),
    };
  }

  private async insert(trx: Trx, rows: Record<string, unknown>[]): Promise<StoredEvent[]> {
    try {
      const inserted = (await trx.insertInto('events').values(rows).returning(EVENT_COLUMNS).execute()) as EventRow[];
      // RETURNING follows VALUES order in practice; sorting makes it a guarantee.
      inserted.sort((a, b) => Number(a.position) - Number(b.position));
      return inserted.map((row) => this.upcast(toStoredEvent(row)));
    } catch (error) {
      throw versionConflictOrSame(error, rows);
    }
  }
}

/** A unique violation on (stream_id, stream_version) is a lost race: report it as a version conflict. */
function versionConflictOrSame(error: unknown, rows: Record<string, unknown>[]): unknown {
  const pgError = error as { code?: string; constraint?: string; message?: string };
  const onStreamVersion =
    pgError.code === '23505' &&
    (pgError.constraint ?? pgError.message ?? '').includes('events_stream_id_stream_version_key');
  if (!onStreamVersion) return error;
  const [first] = rows;
  const streamId = typeof first?.stream_id === 'string' ? first.stream_id : '';
  return new WrongExpectedVersionError(streamId, Number(first?.stream_version ?? 1) - 1, -1);
}
