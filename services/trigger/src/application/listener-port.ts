import type { DecryptedConnection, FileReference } from '@weft/contracts';
import type { EventStore } from '@weft/event-store';
import type { Logger } from '@weft/observability';

/**
 * The seam between the listener supervisor (start/stop with the process, status, restarts) and
 * each trigger type (webhook, schedule, gmail, outlook). A listener knows only this context: it
 * never talks to the engine, the catalog or the bus itself.
 */
export interface TriggerListener {
  /** Begins listening (arms a timer, a poll loop ...); resolves once it is running. */
  start(): Promise<void>;
  /** Stops listening; resolves when no further `fire` will be made by this listener. */
  stop(): Promise<void>;
}

export type ListenerState = 'starting' | 'listening' | 'backing_off' | 'failing' | 'stopped';

/** What `GET /api/v1/processes/:id/listeners` shows per input node; fields left out keep their value. */
export interface ListenerStatusUpdate {
  state?: ListenerState;
  /** ISO time of the last successful poll or tick. */
  lastSuccessAt?: string;
  lastError?: { message: string; at: string } | null;
  /** ISO time of the next poll or tick, null when none is planned. */
  nextRunAt?: string | null;
}

export interface FireOptions {
  /**
   * Unique per firing of this input node (an email id, a tick time, an Idempotency-Key): the
   * execution id is derived from it, so firing twice with the same key starts one execution.
   */
  dedupeKey: string;
  /** W3C trace id to continue (a webhook caller's traceparent). */
  traceId?: string;
}

export interface ListenerContext {
  organizationId: string;
  processId: string;
  /** The input node this listener serves. */
  nodeId: string;
  nodeLabel: string;
  /** The input node's config (triggerType and the trigger's fields, spec "Trigger configuration"). */
  config: Record<string, unknown>;
  /** Requests one execution with `inputData` as the input node's output; resolves once it is queued durably. */
  fire(inputData: unknown, options: FireOptions): Promise<{ executionId: string }>;
  /** Updates this listener's status; also logged with process and node when it carries an error. */
  report(update: ListenerStatusUpdate): void;
  /** A connection of the process's organization, decrypted (OAuth tokens, service-account keys). */
  connection(connectionId: string): Promise<DecryptedConnection>;
  /** Replaces a connection's secret data (refreshed OAuth tokens), stored encrypted by the catalog. */
  updateConnectionData(connectionId: string, data: Record<string, unknown>): Promise<void>;
  /** Stores a file (an attachment) in blob storage and answers its reference. */
  storeFile(name: string, content: Uint8Array, contentType: string): Promise<FileReference>;
  /** For durable listener state (a mailbox stream, a schedule stream) with optimistic concurrency. */
  store: EventStore;
  /** Aborted when the listener must stop. */
  signal: AbortSignal;
  now(): Date;
  logger: Logger;
}

/** Builds the listener of one input node; each trigger type provides one. */
export type ListenerFactory = (context: ListenerContext) => TriggerListener;
