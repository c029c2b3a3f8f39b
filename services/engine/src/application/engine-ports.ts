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
  /** Renews every lease this engine holds. */
  renewAll(): Promise<void>;
  release(executionId: string): Promise<void>;
  /** Running executions whose lease lapsed or never existed: their engine died. */
  orphans(limit: number): Promise<string[]>;
}

/** What the read model knows about executions this engine runs. */
export interface ExecutionStatusReader {
  /** Those of `executionIds` that ended elsewhere (a cancel through another engine). */
  finishedAmong(executionIds: readonly string[]): Promise<string[]>;
}

/** POSTs failure reports to processes' error webhooks without blocking executions. */
export interface ErrorNotifier {
  notify(url: string, payload: ErrorWebhookPayload): void;
  /** Resolves when notifications in flight are done (shutdown, tests). */
  idle(): Promise<void>;
}
