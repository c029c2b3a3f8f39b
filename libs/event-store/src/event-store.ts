import type { Kysely, Transaction } from 'kysely';

/**
 * The event store port. PostgreSQL (and PGlite, embedded) implement it in this library; an
 * EventStoreDB adapter could implement it where such a server runs.
 */

/** Who and what caused an event; written by adapters, never by domain code. */
export interface EventMetadata {
  actorId?: string;
  actorName?: string;
  organizationId?: string;
  correlationId?: string;
  causationId?: string;
  traceId?: string;
  [extension: string]: unknown;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
  metadata?: EventMetadata;
  /** Optional caller-chosen id (UUID); generated when absent. */
  eventId?: string;
  /** Schema version of `data`; 1 when absent. */
  schemaVersion?: number;
}

export interface StoredEvent<Type extends string = string, Data = unknown> {
  eventId: string;
  streamId: string;
  /** 1 for the first event of a stream. */
  streamVersion: number;
  /** Global, gap-free order of commits as subscribers see it. */
  position: number;
  type: Type;
  /** Schema version of `data` as returned: upcasters lift the stored version to the current one on read. */
  schemaVersion: number;
  data: Data;
  metadata: EventMetadata;
  recordedAt: Date;
}

/** `no_stream`: the stream must not exist; a number: its current version must be exactly this. */
export type ExpectedVersion = number | 'any' | 'no_stream' | 'stream_exists';

export class WrongExpectedVersionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedVersion,
    readonly actual: number,
  ) {
    super(`stream ${streamId} is at version ${actual}, expected ${String(expected)}`);
    this.name = 'WrongExpectedVersionError';
  }
}

/** Any kysely handle onto the store's database: the root or a transaction. */
export type Db = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type Trx = Transaction<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A read model fed by events. Inline projections run inside the append transaction, so a read
 * right after a write sees it; the same `apply` replays all events on rebuild.
 */
export interface Projection {
  readonly name: string;
  /** Event types it reacts to; others are never passed to `apply`. */
  readonly eventTypes: readonly string[];
  apply(db: Trx, event: StoredEvent): Promise<void>;
  /** Empty the read model's tables before a rebuild. */
  reset(db: Trx): Promise<void>;
}

export interface AppendOptions {
  expectedVersion?: ExpectedVersion;
}

export interface AppendResult {
  /** Version of the stream after the append. */
  nextExpectedVersion: number;
  events: StoredEvent[];
}

/** One stream's part of a multi-stream append (`appendMany`). */
export interface StreamAppend {
  streamId: string;
  events: NewEvent[];
  expectedVersion?: ExpectedVersion;
  /**
   * Other streams that must be at exactly these versions when the append commits; nothing is
   * written to them. Checked under the append lock like `expectedVersion`: when one has moved,
   * the append fails with a WrongExpectedVersionError naming that stream. A caller that acted on
   * what it knew of another stream (the engine running a process at the revision it has cached)
   * commits only while that is still the latest.
   */
  requires?: readonly StreamAtVersion[];
}

/** A stream and the version it must be at (`StreamAppend.requires`). */
export interface StreamAtVersion {
  streamId: string;
  version: number;
}

/** Per event type, per stored schema version: lifts `data` one version up (v -> v + 1). */
export type Upcasters = Record<string, Record<number, (data: any) => unknown>>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface SubscribeOptions {
  /** Only these event types reach the handler (the checkpoint still moves past the others). */
  eventTypes?: readonly string[];
  /** Events read and handled before the checkpoint is stored; default 100. */
  batchSize?: number;
  /** Polling interval when caught up; default 500 ms (appends in this process wake it at once). */
  pollMs?: number;
  /** Called when the handler throws; the failed event is retried after `pollMs`. */
  onError?: (error: unknown, event: StoredEvent) => void;
}

export interface SubscriptionHandle {
  readonly name: string;
  /** Resolves once the current batch is done and the loop has ended. */
  stop(): Promise<void>;
  /** Resolves when the checkpoint has reached `position` (for tests and graceful hand-overs). */
  waitForPosition(position: number): Promise<void>;
}

export interface ReadAllOptions {
  fromPosition?: number; // exclusive
  limit?: number;
  eventTypes?: readonly string[];
}

export interface EventStore {
  readonly db: Db;
  append(streamId: string, events: NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  readStream(streamId: string, options?: { fromVersion?: number; until?: Date }): Promise<StoredEvent[]>;
  /** Events in position order, never skipping one whose transaction is still in flight. */
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  /** Current version of a stream, 0 when it does not exist. */
  streamVersion(streamId: string): Promise<number>;
  /** Register inline projections; they run in the transaction of every later append. */
  registerProjections(projections: readonly Projection[]): void;
  /** Appends to several streams in one transaction (all or nothing), in the order given. */
  appendMany(batch: readonly StreamAppend[]): Promise<AppendResult[]>;
  /** Register upcasters; every read path applies them. */
  registerUpcasters(upcasters: Upcasters): void;
  /**
   * Durable catch-up subscription: resumes after the stored checkpoint of `name`, hands every
   * event to `handler` once and in position order, stores the checkpoint after each batch.
   * At-least-once: a crash between handling and storing the checkpoint redelivers that batch.
   */
  subscribe(
    name: string,
    handler: (event: StoredEvent) => Promise<void>,
    options?: SubscribeOptions,
  ): SubscriptionHandle;
}
