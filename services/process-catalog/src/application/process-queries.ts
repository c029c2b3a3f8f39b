import { notFound, type Page, type ProcessRecord, type VersionSummary } from '@weft/contracts';
import type { Db, EventStore } from '@weft/event-store';
import { sql } from 'kysely';
import type { Graph } from '../domain/process/graph.js';
import { processStreamId } from '../domain/process/events.js';
import { foldProcess, type ProcessState } from '../domain/process/state.js';
import { parseJson } from '../projections/process-projection.js';
import { toProcessEvent } from '../projections/stored-process-event.js';
import type { Caller } from './caller.js';
import { assertOrganizationAccess, assertProcessAccess } from './process-access.js';
import { toProcessRecord } from './process-record-mapping.js';

export interface PageRequest {
  page: number;
  pageSize: number;
}

export interface ProcessVersion extends VersionSummary {
  processId: string;
  organizationId: string;
  createdById: string;
  snapshot: Graph;
}

export interface ProcessListFilter {
  search?: string;
  /** Members of this process collection only. */
  collectionId?: string;
}

/** Reads of processes and versions: only from the read-model tables (history from the stream). */
export class ProcessQueries {
  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
  ) {}

  async state(processId: string): Promise<{ state: ProcessState; revision: number } | undefined> {
    const row = await this.db
      .selectFrom('catalog_processes')
      .select(['state', 'revision'])
      .where('id', '=', processId)
      .executeTakeFirst();
    return row ? { state: parseJson(row.state) as ProcessState, revision: Number(row.revision) } : undefined;
  }

  /** The state of a process the caller may see, or 404/403. */
  async accessibleState(processId: string, caller: Caller): Promise<{ state: ProcessState; revision: number }> {
    const found = await this.state(processId);
    assertProcessAccess(found ? { id: processId, organizationId: found.state.organizationId } : undefined, caller);
    return found as { state: ProcessState; revision: number };
  }

  async getProcess(processId: string, caller: Caller): Promise<ProcessRecord> {
    const { state, revision } = await this.accessibleState(processId, caller);
    return toProcessRecord(state, revision, await this.versionSummaries(processId));
  }

  /** The process as it was at `at`, folded from its events (audit). */
  async getProcessAt(processId: string, at: Date, caller: Caller): Promise<ProcessRecord> {
    const stored = await this.store.readStream(processStreamId(processId), { until: at });
    const events = stored.flatMap((event) => toProcessEvent(event) ?? []);
    const state = foldProcess(events);
    const current = await this.state(processId);
    const organizationId = state.organizationId || current?.state.organizationId;
    assertProcessAccess(organizationId ? { id: processId, organizationId } : undefined, caller);
    if (state.status !== 'active') throw notFound(`process ${processId} did not exist at ${at.toISOString()}`);
    const versions = stored
      .flatMap((event) => {
        const domain = toProcessEvent(event);
        return domain?.type === 'VersionCreated' && state.versionIds.includes(domain.data.versionId)
          ? [domain.data]
          : [];
      })
      .map((data) => ({
        id: data.versionId,
        versionNumber: data.versionNumber,
        label: data.label,
        createdBy: data.createdBy,
        createdAt: data.at,
      }))
      .reverse();
    return toProcessRecord(state, stored.at(-1)?.streamVersion ?? 0, versions);
  }

  async listProcesses(
    organizationId: string,
    filter: ProcessListFilter,
    page: PageRequest,
    caller: Caller,
  ): Promise<Page<ProcessRecord>> {
    assertOrganizationAccess(organizationId, caller);
    let query = this.db.selectFrom('catalog_processes as p').where('p.organization_id', '=', organizationId);
    if (filter.search) {
      const pattern = `%${filter.search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
      query = query.where(sql<boolean>`p.name ILIKE ${pattern}`);
    }
    if (filter.collectionId) {
      const collectionId = filter.collectionId;
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('catalog_process_collection_members as m')
            .select('m.process_id')
            .whereRef('m.process_id', '=', 'p.id')
            .where('m.collection_id', '=', collectionId),
        ),
      );
    }
    if (caller.actor.processIds) {
      if (caller.actor.processIds.length === 0)
        return { items: [], page: page.page, pageSize: page.pageSize, total: 0 };
      query = query.where('p.id', 'in', caller.actor.processIds);
    }
    const total = await query.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow();
    const rows = await query
      .select(['p.id', 'p.state', 'p.revision'])
      .orderBy('p.name')
      .orderBy('p.id')
      .limit(page.pageSize)
      .offset((page.page - 1) * page.pageSize)
      .execute();
    const versions = await this.versionSummariesOf(rows.map((row) => String(row.id)));
    return {
      items: rows.map((row) =>
        toProcessRecord(parseJson(row.state) as ProcessState, Number(row.revision), versions.get(String(row.id)) ?? []),
      ),
      page: page.page,
      pageSize: page.pageSize,
      total: Number(total.total),
    };
  }

  async versionSummaries(processId: string): Promise<VersionSummary[]> {
    return (await this.versionSummariesOf([processId])).get(processId) ?? [];
  }

  private async versionSummariesOf(processIds: string[]): Promise<Map<string, VersionSummary[]>> {
    const byProcess = new Map<string, VersionSummary[]>();
    if (processIds.length === 0) return byProcess;
    const rows = await this.db
      .selectFrom('catalog_process_versions')
      .select(['id', 'process_id', 'version_number', 'label', 'created_by', 'created_at'])
      .where('process_id', 'in', processIds)
      .orderBy('version_number', 'desc')
      .execute();
    for (const row of rows) {
      const list = byProcess.get(String(row.process_id)) ?? [];
      list.push({
        id: String(row.id),
        versionNumber: Number(row.version_number),
        label: String(row.label),
        createdBy: String(row.created_by),
        createdAt: String(row.created_at),
      });
      byProcess.set(String(row.process_id), list);
    }
    return byProcess;
  }

  async listVersions(processId: string, caller: Caller): Promise<VersionSummary[]> {
    await this.accessibleState(processId, caller);
    return this.versionSummaries(processId);
  }

  /** A version with its snapshot; another organization's version is 404, like its process. */
  async getVersion(versionId: string, caller: Caller): Promise<ProcessVersion> {
    const row = await this.db
      .selectFrom('catalog_process_versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (!row) throw notFound('version not found');
    assertProcessAccess({ id: String(row.process_id), organizationId: String(row.organization_id) }, caller);
    return {
      id: String(row.id),
      processId: String(row.process_id),
      organizationId: String(row.organization_id),
      versionNumber: Number(row.version_number),
      label: String(row.label),
      snapshot: parseJson(row.snapshot) as Graph,
      createdBy: String(row.created_by),
      createdById: String(row.created_by_id),
      createdAt: String(row.created_at),
    };
  }
}
