import type { DecryptedConnection, ProcessRecord } from '@weft/contracts';
import type { ProcessDirectory } from './engine-ports.js';
import { deepFreeze } from '../domain/graph/deep-freeze.js';

const DEFAULT_MAX_PROCESSES = 1000;

/**
 * Processes kept per revision, so a run does not ask the catalog (a bus round trip and its reads)
 * for a process it already has. Before each use the process's current revision is looked up
 * (`revisionOf`: the version of the catalog's event stream, one indexed read; known from the
 * store's own commits in embedded Weft, `KnownProcessRevisions`): a record is served
 * only while it is still the latest, so an edit or a delete is seen by the very next run, exactly
 * as when asking the catalog. Connections are not cached: they carry secrets and are fetched per use.
 */
export class CachedProcessDirectory implements ProcessDirectory {
  private readonly processes = new Map<string, ProcessRecord>();

  constructor(
    private readonly catalog: ProcessDirectory,
    private readonly revisionOf: (processId: string) => Promise<number>,
    private readonly maxProcesses = DEFAULT_MAX_PROCESSES,
  ) {}

  async getProcess(processId: string, organizationId?: string): Promise<ProcessRecord> {
    const revision = await this.revisionOf(processId);
    const cached = this.processes.get(processId);
    // Another organization's process, or a stale one, goes to the catalog, which answers as it always does.
    if (
      cached &&
      cached.revision === revision &&
      (organizationId === undefined || cached.organization_id === organizationId)
    ) {
      // Most recently used last: the oldest entry is the one dropped when the cache is full.
      this.processes.delete(processId);
      this.processes.set(processId, cached);
      return cached;
    }
    // Frozen all the way down: one copy serves every run of its revision, none may change it.
    const fresh = deepFreeze(await this.catalog.getProcess(processId, organizationId));
    this.processes.delete(processId);
    this.processes.set(processId, fresh);
    if (this.processes.size > this.maxProcesses) this.processes.delete(this.processes.keys().next().value as string);
    return fresh;
  }

  /**
   * The record last fetched for the process, however old: only for a read that checks the
   * process's revision against `revision` itself (`executionStatsAtRevision`).
   */
  peek(processId: string): ProcessRecord | undefined {
    return this.processes.get(processId);
  }

  getConnection(connectionId: string, organizationId: string): Promise<DecryptedConnection> {
    return this.catalog.getConnection(connectionId, organizationId);
  }
}
