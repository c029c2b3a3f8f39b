import type { DecryptedConnection, ErrorWebhookPayload, ProcessRecord } from '@weft/contracts';

/** What the engine needs from outside, as interfaces; adapters implement them over the bus and PostgreSQL. */

/** The catalog's processes and connections (served by process-catalog over the bus). */
export interface ProcessDirectory {
  getProcess(processId: string, organizationId?: string): Promise<ProcessRecord>;
  getConnection(connectionId: string, organizationId: string): Promise<DecryptedConnection>;
}

/** Which engine runs which execution: a lease renewed while it runs, taken over when it lapses. */
export interface ExecutionLeases {
  /** Takes the lease of a new execution; false when another engine holds it. */
  claimNew(executionId: string): Promise<boolean>;
  /** Takes over a lapsed (or missing) lease; false when its holder is alive. */
  claimLapsed(executionId: string): Promise<boolean>;
  /** Renews the leases of these executions (those running here); returns those still held. */
  renew(executionIds: readonly string[]): Promise<string[]>;
  release(executionId: string): Promise<void>;
  /**
   * Takes the leases of up to `limit` running executions whose lease lapsed or never existed
   * (their engine died), in one statement; returns those claimed here.
   */
  claimOrphans(limit: number): Promise<string[]>;
}

/** What the read model knows about executions this engine runs. */
export interface ExecutionStatusReader {
  /** Those of `executionIds` that ended elsewhere (a cancel through another engine). */
  finishedAmong(executionIds: readonly string[]): Promise<string[]>;
}

/** A parked execution and when it is due. */
export interface DueWait {
  executionId: string;
  dueAt: Date;
}

/** Executions unloaded during a long wait (rows written by the commit that parks them). */
export interface ParkedWaits {
  /** Those due at or before `before`, soonest first. */
  dueBefore(before: Date, limit: number): Promise<DueWait[]>;
  /** Whether the execution is still parked and due at `now`. */
  isDue(executionId: string, now: Date): Promise<boolean>;
}

/** Error-webhook deliveries still to make (rows written by the commits of the failure and each attempt). */
export interface ErrorWebhookQueue {
  /** Claims up to `limit` deliveries due at `now` for `claimMs`; returns their execution ids. */
  claimDue(now: Date, limit: number, claimMs: number): Promise<string[]>;
  /** Forgets a delivery that has nothing to deliver. */
  drop(executionId: string): Promise<void>;
}

/** What one POST to an error webhook gave. */
export interface ErrorWebhookResult {
  delivered: boolean;
  /** Worth another attempt (network error, timeout, 5xx, 408, 429). */
  retry: boolean;
  httpStatus: number | null;
  error: string | null;
}

/** POSTs one failure report to an error webhook. */
export interface ErrorWebhookSender {
  send(url: string, payload: ErrorWebhookPayload, deliveryAttempt: number): Promise<ErrorWebhookResult>;
}
