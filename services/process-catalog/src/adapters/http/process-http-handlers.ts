import { badRequest, notFound, parsePaging, ProblemError, type HttpCall, type HttpReply } from '@weft/contracts';
import type { CatalogHttpHandler } from './catalog-http-handler.js';
import type { CatalogApplication } from '../../application/catalog-application.js';
import type { Caller } from '../../application/caller.js';
import type { CommandResult, ProcessCommandInput } from '../../application/process-commands.js';
import {
  DEFAULT_TIMEOUT_SECONDS,
  exportProcess,
  forkProcess,
  importProcess,
} from '../../application/process-documents.js';
import { processHistory } from '../../application/process-history.js';
import { lintStoredProcess } from '../../application/process-lint.js';
import { toProcessEdge } from '../../application/process-record-mapping.js';
import type { ProcessSettings } from '../../domain/process/events.js';
import { etag, expectedRevision } from './call-context.js';
import { listFilter } from './list-query.js';
import { edgeFromInput, nodeFromInput, processFormGraph, type EdgeInput, type NodeInput } from './graph-input.js';
import { withProcessFormPaths } from './process-form-paths.js';

export type ProcessRouteName =
  | 'createProcess'
  | 'listProcesses'
  | 'getProcess'
  | 'updateProcess'
  | 'deleteProcess'
  | 'addNode'
  | 'updateNode'
  | 'deleteNode'
  | 'addEdge'
  | 'deleteEdge'
  | 'replaceGraph'
  | 'lockProcess'
  | 'unlockProcess'
  | 'startProcess'
  | 'stopProcess'
  | 'lintProcess'
  | 'processHistory'
  | 'exportProcess'
  | 'importProcesses'
  | 'forkProcess'
  | 'createVersion'
  | 'listVersions'
  | 'getVersion'
  | 'restoreVersion'
  | 'deleteVersion';
export type ProcessHttpHandlers = Record<ProcessRouteName, CatalogHttpHandler>;

interface ProcessBody {
  name?: string;
  description?: string;
  max_retries?: number;
  error_webhook_url?: string | null;
  timeout_seconds?: number;
  nodes?: NodeInput[];
  edges?: EdgeInput[];
}

const param = (call: HttpCall, name: string): string => {
  const value = call.params[name];
  if (!value) throw badRequest(`missing path parameter ${name}`);
  return value;
};

const settingsOf = (body: ProcessBody): Partial<ProcessSettings> => ({
  ...(body.name === undefined ? {} : { name: body.name }),
  ...(body.description === undefined ? {} : { description: body.description }),
  ...(body.max_retries === undefined ? {} : { maxRetries: body.max_retries }),
  ...(body.error_webhook_url === undefined ? {} : { errorWebhookUrl: body.error_webhook_url }),
  ...(body.timeout_seconds === undefined ? {} : { timeoutSeconds: body.timeout_seconds }),
});

/** `2026-01-31`, `2026-01-31T12:00`, `...:00.123Z`, `...+02:00`: a real ISO 8601 time of years 1-9999. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function parseIsoTime(text: string): Date | undefined {
  if (!ISO_TIME.test(text)) return undefined;
  const time = new Date(text);
  return Number.isNaN(time.getTime()) || time.getUTCFullYear() < 1 ? undefined : time;
}

const bodyOf = <T>(call: HttpCall): T => (call.body ?? {}) as T;

/** Process, graph, lock, start/stop, lint, history and version endpoints of the catalog. */
export function processHttpHandlers(app: CatalogApplication): ProcessHttpHandlers {
  const newId = (): string => app.runtime.newId();

  const run = (
    call: HttpCall,
    caller: Caller,
    processId: string,
    command: ProcessCommandInput,
  ): Promise<CommandResult> =>
    withProcessFormPaths(() => app.processes.execute(processId, command, caller, expectedRevision(call.headers)));

  /** Writes answer the process as the read model now shows it, with its revision as ETag. */
  const recordReply = async (processId: string, caller: Caller, status = 200): Promise<HttpReply> => {
    const record = await app.queries.getProcess(processId, caller);
    return { status, body: record, headers: etag(record.revision) };
  };

  const simple =
    (type: 'LockProcess' | 'UnlockProcess' | 'StopProcess' | 'DeleteProcess', status = 200): CatalogHttpHandler =>
    async (call, caller) => {
      const id = param(call, 'id');
      const result = await run(call, caller, id, { type, data: {} });
      return status === 204 ? { status, headers: etag(result.revision) } : recordReply(id, caller);
    };

  return {
    async createProcess(call, caller) {
      const body = bodyOf<ProcessBody>(call);
      const processId = newId();
      const graph = processFormGraph(body.nodes ?? [], body.edges ?? [], newId);
      await run(call, caller, processId, {
        type: 'CreateProcess',
        data: {
          processId,
          organizationId: param(call, 'org_id'),
          name: body.name ?? '',
          description: body.description ?? '',
          maxRetries: body.max_retries ?? 0,
          errorWebhookUrl: body.error_webhook_url ?? null,
          timeoutSeconds: body.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
          ...graph,
        },
      });
      return recordReply(processId, caller, 201);
    },

    async listProcesses(call, caller) {
      const page = await app.queries.listProcesses(
        param(call, 'org_id'),
        listFilter(call),
        parsePaging(call.query),
        caller,
      );
      return { status: 200, body: page };
    },

    async getProcess(call, caller) {
      const id = param(call, 'id');
      const at = call.query.at;
      if (at === undefined) return recordReply(id, caller);
      const time = parseIsoTime(Array.isArray(at) ? (at[0] ?? '') : at);
      if (!time) {
        throw badRequest('at must be an ISO 8601 time', [
          { path: '/query/at', message: 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z' },
        ]);
      }
      return { status: 200, body: await app.queries.getProcessAt(id, time, caller) };
    },

    async updateProcess(call, caller) {
      const id = param(call, 'id');
      const body = bodyOf<ProcessBody>(call);
      if ((body.nodes === undefined) !== (body.edges === undefined)) {
        throw badRequest('send nodes and edges together, or neither', [
          { path: body.nodes === undefined ? '/nodes' : '/edges', message: 'is required with the other' },
        ]);
      }
      const graph = body.nodes && body.edges ? processFormGraph(body.nodes, body.edges, newId) : undefined;
      await run(call, caller, id, {
        type: 'ChangeProcessSettings',
        data: { changes: settingsOf(body), ...(graph ? { graph } : {}) },
      });
      return recordReply(id, caller);
    },

    deleteProcess: simple('DeleteProcess', 204),

    async addNode(call, caller) {
      const id = param(call, 'id');
      const node = nodeFromInput(bodyOf<NodeInput>(call), newId);
      const result = await run(call, caller, id, { type: 'AddNode', data: { node } });
      return { status: 201, body: node, headers: etag(result.revision) };
    },

    async updateNode(call, caller) {
      const id = param(call, 'id');
      const nodeId = param(call, 'node_id');
      const body = bodyOf<Omit<NodeInput, 'id'>>(call);
      const result = await run(call, caller, id, {
        type: 'UpdateNode',
        data: {
          nodeId,
          ...(body.type === undefined ? {} : { type: body.type }),
          ...(body.position === undefined ? {} : { position: body.position }),
          ...(body.config === undefined ? {} : { config: body.config }),
        },
      });
      const node = result.state.nodes.find((candidate) => candidate.id === nodeId);
      if (!node) throw notFound(`node ${nodeId} not found`);
      return { status: 200, body: node, headers: etag(result.revision) };
    },

    async deleteNode(call, caller) {
      const id = param(call, 'id');
      await run(call, caller, id, { type: 'DeleteNode', data: { nodeId: param(call, 'node_id') } });
      return recordReply(id, caller);
    },

    async addEdge(call, caller) {
      const id = param(call, 'id');
      const edge = edgeFromInput(bodyOf<EdgeInput>(call), newId);
      const result = await run(call, caller, id, { type: 'AddEdge', data: { edge } });
      return { status: 201, body: toProcessEdge(edge), headers: etag(result.revision) };
    },

    async deleteEdge(call, caller) {
      const id = param(call, 'id');
      await run(call, caller, id, { type: 'DeleteEdge', data: { edgeId: param(call, 'edge_id') } });
      return recordReply(id, caller);
    },

    async replaceGraph(call, caller) {
      const id = param(call, 'id');
      const body = bodyOf<{ nodes?: NodeInput[]; edges?: EdgeInput[] }>(call);
      await run(call, caller, id, {
        type: 'ReplaceGraph',
        data: processFormGraph(body.nodes ?? [], body.edges ?? [], newId),
      });
      return recordReply(id, caller);
    },

    lockProcess: simple('LockProcess'),
    unlockProcess: simple('UnlockProcess'),
    stopProcess: simple('StopProcess'),

    async startProcess(call, caller) {
      const id = param(call, 'id');
      const { state } = await app.queries.accessibleState(id, caller);
      const schemas = await app.schemas.schemasOf(state.organizationId);
      const connections = await app.connections.typesOf(state.organizationId);
      await run(call, caller, id, { type: 'StartProcess', data: { schemas, connections } });
      return recordReply(id, caller);
    },

    async lintProcess(call, caller) {
      return {
        status: 200,
        body: await lintStoredProcess(param(call, 'id'), caller, app.queries, app.schemas, app.connections),
      };
    },

    async processHistory(call, caller) {
      const page = await processHistory(param(call, 'id'), parsePaging(call.query), caller, app.queries, app.store);
      return { status: 200, body: page };
    },

    async exportProcess(call, caller) {
      return { status: 200, body: await exportProcess(app, param(call, 'id'), caller) };
    },

    async importProcesses(call, caller) {
      const organizationId = param(call, 'orgId');
      if (!Array.isArray(call.body)) {
        const processId = await importProcess(app, organizationId, call.body, caller);
        return recordReply(processId, caller, 201);
      }
      // An array is imported document by document; each succeeds or fails whole on its own.
      const results = [];
      for (const [index, document] of (call.body as unknown[]).entries()) {
        try {
          const processId = await importProcess(app, organizationId, document, caller, `/${index}`);
          results.push({ index, status: 201, processId });
        } catch (error) {
          if (!(error instanceof ProblemError) || error.status >= 500) throw error;
          results.push({
            index,
            status: error.status,
            errors: error.problem.errors ?? [{ path: `/${index}`, message: error.message }],
          });
        }
      }
      return { status: 200, body: { results } };
    },

    async forkProcess(call, caller) {
      const name = bodyOf<{ name?: string }>(call).name ?? '';
      const forkId = await forkProcess(app, param(call, 'id'), name, caller);
      return recordReply(forkId, caller, 201);
    },

    async createVersion(call, caller) {
      const processId = param(call, 'process_id');
      const versionId = newId();
      const label = bodyOf<{ label?: string }>(call).label ?? '';
      await run(call, caller, processId, { type: 'CreateVersion', data: { versionId, label } });
      const { id, versionNumber, createdBy, createdAt } = await app.queries.getVersion(versionId, caller);
      return { status: 201, body: { id, versionNumber, label, createdBy, createdAt } };
    },

    async listVersions(call, caller) {
      return { status: 200, body: await app.queries.listVersions(param(call, 'process_id'), caller) };
    },

    async getVersion(call, caller) {
      return { status: 200, body: await app.queries.getVersion(param(call, 'version_id'), caller) };
    },

    async restoreVersion(call, caller) {
      const version = await app.queries.getVersion(param(call, 'version_id'), caller);
      await run(call, caller, version.processId, {
        type: 'RestoreVersion',
        data: { versionId: version.id, versionNumber: version.versionNumber, snapshot: version.snapshot },
      });
      return recordReply(version.processId, caller);
    },

    async deleteVersion(call, caller) {
      const version = await app.queries.getVersion(param(call, 'version_id'), caller);
      await run(call, caller, version.processId, { type: 'DeleteVersion', data: { versionId: version.id } });
      return { status: 204 };
    },
  };
}
