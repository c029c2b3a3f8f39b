import { randomUUID } from 'node:crypto';
import { timeOrderedUuid } from '../../time-ordered-uuid.js';
import { sql, type RawBuilder } from 'kysely';
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
import { AppendSignal } from '../../subscriptions/append-signal.js';
import { CommittedEvents } from '../../subscriptions/committed-events.js';
import { startSubscription } from '../../subscriptions/catch-up-subscription.js';
import { mergeUpcasters, upcastEvent } from '../../upcasting.js';
import {
  appendErrorOf,
  appendStatement,
  assignPositions,
  textIsFixed,
  type AppendedRow,
  type VersionCheck,
} from './append-statement.js';
import {
  EVENT_COLUMNS,
  EVENT_COLUMNS_AS_TEXT,
  metadataParserOfOneRead,
  toStoredEvent,
  toStoredEventParsedLazily,
  type EventRow,
  type EventTextRow,
} from './event-rows.js';
import { EVENT_STORE_MIGRATIONS_TABLE, eventStoreMigrations } from './event-store-migrations.js';
import { checkExpectedVersion } from './expected-version.js';
import { migrate } from './migrate.js';
import type { Database, QueuedStatement } from './open-database.js';

/** Every event carries the trace it was written in, unless the caller named one (DESIGN.md). */
const withTraceId = (metadata: EventMetadata | undefined): EventMetadata => {
  if (metadata?.traceId) return metadata;
  const traceId = currentTraceId();
  return traceId ? { ...metadata, traceId } : (metadata ?? {});
};

/** Set for its transaction by the lock statement sent with the append (`queuedTransaction`); the append statement checks it. */
const APPEND_LOCK_SETTING = 'weft.append_lock';

/** First key of every advisory lock the store takes; the second is the events table's oid. */
export const APPEND_LOCK_NAMESPACE = 0x5745_4654; // 'WEFT'

/** How soon a lost or refused LISTEN is tried again. */
const RELISTEN_MS = 1000;

export interface ReadAllRangeOptions extends ReadAllOptions {
  /** Inclusive upper bound. */
  toPosition?: number;
  /**
   * Data and metadata come as the database's JSON text and are parsed only when read; the text
   * is kept for `envelopeJson` (the outbox relay publishes it without decoding and encoding again).
   * Read-only: events of one read with equal metadata share the parsed object.
   */
  jsonText?: boolean;
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
  /** The events of this store's appends after their commit, for the outbox relay (it need not read them back). */
  readonly committed = new CommittedEvents();
  /** Channel NOTIFY'd at the commit of every append (PostgreSQL only). */
  readonly notifyChannel: string;
  /** The payload of this store's NOTIFYs: its own commits already woke its loops in process. */
  private readonly notifier = randomUUID();
  /** Transactions opened by `appendTransaction`, which hold the append lock from their start. */
  private readonly lockedTransactions = new WeakSet<Trx>();
  private readonly projections: Projection[] = [];
  private readonly upcasters: Upcasters = {};
  private readonly subscriptions = new Set<SubscriptionHandle>();
  private unlisten: Promise<() => Promise<void>> | undefined;
  private closed = false;
  private readonly commitListeners = new Set<CommitListener>();
  /** What each started outbox relay may publish (`keepAppendedJsonFor`). */
  private readonly publishableBy = new Set<(event: StoredEvent) => boolean>();
  /** Whether an appended event keeps the JSON texts sent for it: with no relay started, every one. */
  private readonly publishable = (event: StoredEvent): boolean => {
    if (this.publishableBy.size === 0) return true;
    for (const publishable of this.publishableBy) {
      try {
        if (publishable(event)) return true;
      } catch {
        // A relay's subject or interest that fails must not fail the append: the texts are kept.
        return true;
      }
    }
    return false;
  };

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

  /**
   * `listener` hears of every append this store commits (its events, in position order, once
   * committed) and, with `undefined`, of every append it cannot tell the outcome of (a failure at
   * or after COMMIT) and of another process's append (its NOTIFY, heard while the store listens:
   * see `listenForAppends`). Answers how to stop listening.
   */
  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /**
   * Called by each outbox relay as it starts, with what it may publish (answers how to stop): an
   * append keeps the JSON texts it sent, for a relay to publish without encoding them again, only
   * for events some started relay may publish when they are appended. The embedded bus's interest
   * retention skips a run no durable takes; kept for every event, that run's texts outlived
   * scavenges with its events and were promoted (about 12% of what the embedded process promoted
   * at c=50). An event that becomes publishable later is read back by the relay. `publishable`
   * sees the event before its position and recorded time are assigned.
   */
  keepAppendedJsonFor(publishable: (event: StoredEvent) => boolean): () => void {
    this.publishableBy.add(publishable);
    return () => this.publishableBy.delete(publishable);
  }

  private heard(events: readonly StoredEvent[] | undefined): void {
    for (const listener of this.commitListeners) {
      try {
        listener(events);
      } catch (error) {
        // The append committed (or failed) whatever a listener does: its caller must hear that.
        process.emitWarning(`an onCommit listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  upcast(event: StoredEvent): StoredEvent {
    return upcastEvent(event, this.upcasters);
  }

  async append(streamId: string, events: NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    const [result] = await this.appendMany([{ streamId, events, expectedVersion: options.expectedVersion }]);
    return result!;
  }

  async appendMany(batch: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.appendAtOnce(batch);
  }

  /**
   * The append itself, for callers that must write other rows in the same transaction. The caller
   * commits; call `appendSignal.notify()` afterwards to wake in-process subscribers at once.
   * `alongside` gets the batch's events before they are written (positions still 0) and may
   * return writes to other tables: they go in the same statement as the insert (one round trip),
   * so they must not depend on each other or on the new event rows.
   */
  async appendInTransaction(
    trx: Trx,
    batch: readonly StreamAppend[],
    options: AppendInTransactionOptions = {},
  ): Promise<AppendResult[]> {
    await this.lockAppends(trx);
    // Exact expectations (the engine's) are checked by the insert statement itself, under the
    // lock: one round trip fewer. Others need the current versions first.
    const exact = isExact(batch);
    const versions = exact
      ? new Map<string, number>()
      : await this.currentVersions(trx, [...new Set(batch.map((item) => item.streamId))]);
    const { checks, events, counts } = planAppend(batch, versions, exact);
    const alongside = options.alongside ? await options.alongside(events.map((event) => this.upcast(event))) : [];
    if (events.length > 0 || alongside.length > 0 || checks.length > 0)
      await this.insert(trx, events, checks, alongside);
    const stored = events.map((event) => this.upcast(event));
    for (const event of stored) {
      for (const projection of this.projections) {
        if (projection.eventTypes.includes(event.type)) await projection.apply(trx, event);
      }
    }
    return resultsOf(counts, stored);
  }

  /**
   * `appendMany` with the caller's writes to other tables in the same statement (`alongside`, as
   * in `appendInTransaction`), committed by a transaction whose statements are all sent at once
   * (`Database.queuedTransaction`): the append lock is held while PostgreSQL works, never while
   * this process is busy with other work before it sends the next statement (at load, most of a
   * group commit's time went to those turns of the event loop). `alongside` is first called
   * without a reader, before the transaction: it may then only use what it holds (it answers
   * undefined when it must read). Batches whose `alongside` must read, with versions to read
   * first, with events a registered projection handles, and PGlite take the transaction of
   * `appendTransaction`, where `alongside` reads with that transaction, under the lock.
   */
  async appendAtOnce(
    batch: readonly StreamAppend[],
    options: {
      alongside?: (
        events: readonly StoredEvent[],
        reader: Db | undefined,
      ) => Promise<readonly RawBuilder<unknown>[] | undefined>;
    } = {},
  ): Promise<AppendResult[]> {
    const queued = this.database.queuedTransaction;
    const planned = queued && isExact(batch) ? planAppend(batch, new Map(), true) : undefined;
    const projected = planned?.events.some((event) =>
      this.projections.some((projection) => projection.eventTypes.includes(event.type)),
    );
    const alongside =
      queued && planned && !projected
        ? await (options.alongside?.(
            planned.events.map((event) => this.upcast(event)),
            undefined,
          ) ?? [])
        : undefined;
    if (!queued || !planned || !alongside) {
      let results: AppendResult[];
      const ticket = this.committed.appendStarted();
      try {
        results = await this.appendTransaction((trx) =>
          this.appendInTransaction(trx, batch, {
            alongside: options.alongside && ((events) => this.writesWith(trx, events, options.alongside!)),
          }),
        );
      } catch (error) {
        // A failure at COMMIT may still have committed: the relay must look.
        this.outcomeUnknown();
        throw error;
      } finally {
        this.committed.appendSettled(ticket);
      }
      const committed = results.flatMap((result) => result.events);
      this.committed.committed(committed);
      this.heard(committed);
      this.appendSignal.notify();
      return results;
    }
    const { checks, events, counts } = planned;
    let bytes = 0;
    if (events.length > 0 || alongside.length > 0 || checks.length > 0) {
      const { sql: text, parameters } = appendStatement(events, checks, alongside, {
        lockedBy: APPEND_LOCK_SETTING,
        publishable: this.publishable,
      }).compile(this.db);
      const statement = { sql: text, parameters, prepared: textIsFixed(checks, alongside) };
      for (const parameter of parameters) if (typeof parameter === 'string') bytes += parameter.length;
      let rows: unknown[];
      const ticket = this.committed.appendStarted();
      try {
        [, rows = []] = await queued([this.lockStatement(), statement]);
      } catch (error) {
        this.outcomeUnknown();
        throw appendErrorOf(error, events, checks);
      } finally {
        this.committed.appendSettled(ticket);
      }
      try {
        assignPositions(events, rows as AppendedRow[]);
      } catch (error) {
        // Committed, but its rows do not say where: the relay reads them.
        this.outcomeUnknown();
        throw error;
      }
    }
    let stored: StoredEvent[];
    try {
      stored = events.map((event) => this.upcast(event));
    } catch (error) {
      // Committed, but not in hand (an upcaster failed): the relay and the listeners read them.
      this.outcomeUnknown();
      throw error;
    }
    this.committed.committed(stored, bytes);
    this.heard(stored);
    this.appendSignal.notify();
    return resultsOf(counts, stored);
  }

  private async writesWith(
    trx: Trx,
    events: readonly StoredEvent[],
    alongside: (events: readonly StoredEvent[], reader: Db) => Promise<readonly RawBuilder<unknown>[] | undefined>,
  ): Promise<readonly RawBuilder<unknown>[]> {
    const writes = await alongside(events, trx);
    if (!writes) throw new Error('alongside wrote nothing although it could read');
    return writes;
  }

  /**
   * The append lock, with the NOTIFY that wakes other processes' subscribers at commit, and a
   * setting of the transaction that the append statement requires (`lockedBy`).
   */
  private lockStatement(): QueuedStatement {
    return {
      sql: 'SELECT pg_advisory_xact_lock($1, $2), pg_notify($3, $4), set_config($5, $6, true)',
      parameters: [
        APPEND_LOCK_NAMESPACE,
        this.eventsTableOid,
        this.notifyChannel,
        this.notifier,
        APPEND_LOCK_SETTING,
        'on',
      ],
      prepared: true,
    };
  }

  /**
   * Runs `work` in a transaction that already holds the append lock, and commits it: on PostgreSQL
   * `BEGIN` and the lock (with its NOTIFY) go in one round trip instead of two, which a group
   * commit pays for every batch. `appendInTransaction` inside it takes no second lock.
   */
  async appendTransaction<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    if (this.database.dialect !== 'postgres') return this.db.transaction().execute(work);
    // Simple-protocol statements (no parameters): every value is a number or our own name.
    const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
    const begin = sql.raw(
      `BEGIN; SELECT pg_advisory_xact_lock(${APPEND_LOCK_NAMESPACE}, ${this.eventsTableOid}), ` +
        `pg_notify(${literal(this.notifyChannel)}, ${literal(this.notifier)})`,
    );
    return this.db.connection().execute(async (connection) => {
      const trx = connection as unknown as Trx;
      this.lockedTransactions.add(trx);
      try {
        await begin.execute(connection);
        const result = await work(trx);
        await sql.raw('COMMIT').execute(connection);
        return result;
      } catch (error) {
        // Also after a failed lock: the connection must go back to the pool outside a transaction.
        await sql
          .raw('ROLLBACK')
          .execute(connection)
          .catch(() => undefined);
        throw error;
      } finally {
        this.lockedTransactions.delete(trx);
      }
    });
  }

  /**
   * Blocks other appends to this events table until the transaction ends. On PostgreSQL it also
   * queues the NOTIFY that wakes other processes' subscribers at commit (one round trip for both).
   */
  async lockAppends(trx: Trx): Promise<void> {
    // PGlite needs no lock: its dialect already runs one transaction at a time.
    if (this.database.dialect !== 'postgres' || this.lockedTransactions.has(trx)) return;
    await sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK_NAMESPACE}, ${this.eventsTableOid}), pg_notify(${this.notifyChannel}, ${this.notifier})`.execute(
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
      // The rows are typed by hand below: kysely only needs to know these are columns of events.
      .select((options.jsonText ? EVENT_COLUMNS_AS_TEXT : EVENT_COLUMNS) as typeof EVENT_COLUMNS)
      .where('position', '>', options.fromPosition ?? 0)
      .orderBy('position');
    if (options.toPosition !== undefined) query = query.where('position', '<=', options.toPosition);
    if (options.eventTypes !== undefined) {
      if (options.eventTypes.length === 0) return [];
      query = query.where('type', 'in', options.eventTypes);
    }
    if (options.limit !== undefined) query = query.limit(options.limit);
    const rows = await query.execute();
    if (options.jsonText) {
      const parseMetadata = metadataParserOfOneRead();
      return (rows as EventTextRow[]).map((row) => this.upcast(toStoredEventParsedLazily(row, parseMetadata)));
    }
    return (rows as EventRow[]).map((row) => this.upcast(toStoredEvent(row)));
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
   * Starts following NOTIFY from other processes, once (PostgreSQL only, and not when this process
   * is the database's only writer: every append then wakes the loops from here, and the connection
   * would only hear its own commits). Resolves when listening; a failed LISTEN only costs latency,
   * since the loops still poll.
   */
  async listenForAppends(): Promise<void> {
    if (this.database.dialect !== 'postgres' || this.database.onlyWriter === true || this.closed) return;
    if (this.unlisten)
      return this.unlisten.then(
        () => undefined,
        () => undefined,
      );
    const listening = this.database
      .listen(
        this.notifyChannel,
        // The echo of an append made here is skipped: it would only cost every loop another empty read.
        (payload) => payload !== this.notifier && this.outcomeUnknown(),
        // The connection failed or ended: what came meanwhile is read at once, and listening is
        // taken up again (a second later, and again after each failure) until the store closes.
        () => this.listeningLost(listening),
      )
      .then(
        (unlisten) => {
          // Appends between a loop's last read and this moment sent no NOTIFY we heard: re-read once.
          this.outcomeUnknown();
          return unlisten;
        },
        (error: unknown) => {
          this.listeningLost(listening);
          throw error;
        },
      );
    this.unlisten = listening;
    await this.unlisten.then(
      () => undefined,
      () => undefined,
    );
  }

  private listeningLost(lost: Promise<unknown>): void {
    if (this.unlisten !== lost) return;
    this.unlisten = undefined;
    this.outcomeUnknown();
    if (!this.closed) setTimeout(() => !this.closed && void this.listenForAppends(), RELISTEN_MS).unref();
  }

  /**
   * An append whose events are not in hand (failed, or of unknown outcome; another process's):
   * wakes the loops to read the database at once (the relay may be waiting on a gap).
   */
  private outcomeUnknown(): void {
    this.committed.requestRead();
    this.heard(undefined);
    this.appendSignal.notify();
  }

  /** Stops every subscription started here and the NOTIFY listener; the database stays open. */
  async close(): Promise<void> {
    this.closed = true;
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

  private async insert(
    trx: Trx,
    events: StoredEvent[],
    checks: readonly VersionCheck[],
    alongside: readonly RawBuilder<unknown>[],
  ): Promise<void> {
    let rows: AppendedRow[];
    try {
      ({ rows } = await appendStatement(events, checks, alongside, { publishable: this.publishable }).execute(trx));
    } catch (error) {
      throw appendErrorOf(error, events, checks);
    }
    assignPositions(events, rows);
  }
}

/** Exact expectations (the engine's) are checked by the append statement itself. */
const isExact = (batch: readonly StreamAppend[]): boolean =>
  batch.every((item) => item.expectedVersion === 'no_stream' || typeof item.expectedVersion === 'number');

/**
 * The batch's events with their stream versions, and the version checks the statement makes:
 * `versions` holds the streams' current versions when they were read first (not `exact`).
 */
function planAppend(
  batch: readonly StreamAppend[],
  versions: Map<string, number>,
  exact: boolean,
): { checks: VersionCheck[]; events: StoredEvent[]; counts: { count: number; next: number }[] } {
  const checks: VersionCheck[] = [];
  const events: StoredEvent[] = [];
  const counts = batch.map((item) => {
    let current = versions.get(item.streamId);
    if (current === undefined && !exact) current = 0;
    if (current === undefined) {
      // First append to this stream in an exact batch: the statement verifies the stream is there.
      current = item.expectedVersion === 'no_stream' ? 0 : (item.expectedVersion as number);
      checks.push({ s: item.streamId, v: current, x: item.expectedVersion ?? 'any' });
    }
    checkExpectedVersion(item.streamId, item.expectedVersion, current);
    for (const { streamId, version } of item.requires ?? []) checks.push({ s: streamId, v: version, x: version });
    const next = current + item.events.length;
    versions.set(item.streamId, next);
    const first = current;
    item.events.forEach((event, index) => events.push(toPendingEvent(item.streamId, first + index + 1, event)));
    return { count: item.events.length, next };
  });
  return { checks, events, counts };
}

/** Each append's result: its events, in batch order, and the stream's version after them. */
function resultsOf(counts: readonly { count: number; next: number }[], stored: readonly StoredEvent[]): AppendResult[] {
  let offset = 0;
  return counts.map(({ count, next }) => {
    const events = stored.slice(offset, offset + count);
    offset += count;
    return { nextExpectedVersion: next, events };
  });
}

/** Hears of a store's commits: the events committed, or `undefined` when it cannot know what was. */
export type CommitListener = (events: readonly StoredEvent[] | undefined) => void;

export interface AppendInTransactionOptions {
  /** Writes to other tables for the same statement as the insert; see `appendInTransaction`. */
  alongside?: (events: readonly StoredEvent[]) => Promise<readonly RawBuilder<unknown>[]>;
}

/**
 * The stored event as the append will return it, position and recorded_at filled in after the
 * insert. `data` is the caller's value (JSON-safe by contract): a read returns it parsed from jsonb.
 * `data: undefined` is stored as JSON null, as JSON.stringify would.
 */
function toPendingEvent(streamId: string, streamVersion: number, event: NewEvent): StoredEvent {
  return {
    eventId: event.eventId ?? timeOrderedUuid(),
    streamId,
    streamVersion,
    position: 0,
    type: event.type,
    schemaVersion: event.schemaVersion ?? 1,
    data: event.data ?? null,
    metadata: withTraceId(event.metadata),
    recordedAt: new Date(0),
  };
}
