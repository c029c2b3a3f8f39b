import { catalogHttp } from '../bus/catalog-subjects.js';
import {
  createProcessBodySchema,
  createCollectionBodySchema,
  createConnectionBodySchema,
  createSchemaBodySchema,
  updateCollectionBodySchema,
  updateSchemaBodySchema,
  createVersionBodySchema,
  edgeInputSchema,
  nodeInputSchema,
  replaceGraphBodySchema,
  updateNodeBodySchema,
  updateProcessBodySchema,
} from '../catalog/catalog-request-schemas.js';
import { bulkImportBodySchema, forkProcessBodySchema } from '../catalog/process-document.js';
import { httpRoute, type HttpRoute, type HttpMethod } from './http-route.js';
import type { RequestSpec } from '../bus/message-spec.js';
import type { HttpCall, HttpReply } from './http-route.js';

const PROCESSES = 'Processes';
const GRAPH = 'Process graph';
const VERSIONS = 'Process versions';
const CONNECTIONS = 'Connections';
const SCHEMAS = 'Schemas';
const IF_MATCH = ' Send `If-Match: <revision>` to fail with 409 instead of overwriting a newer revision.';

/** Public HTTP routes served by the process catalog (docs/catalog.md). */
export const catalogRoutes: HttpRoute[] = [
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/by-org/:org_id',
    spec: catalogHttp.createProcess,
    createsProcess: true,
    summary: 'Create a process, optionally with nodes and edges. Answers the process record.',
    tag: PROCESSES,
    bodySchema: createProcessBodySchema,
    orgParam: 'org_id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/by-org/:org_id',
    spec: catalogHttp.listProcesses,
    summary: 'Processes of an organization by name. Query: page, pageSize, search (name contains), collectionId.',
    tag: PROCESSES,
    orgParam: 'org_id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/by-id/:id',
    spec: catalogHttp.getProcess,
    summary: 'One process record. Query `at=<ISO time>`: the process as it was then, rebuilt from its events.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'PUT',
    path: '/api/v1/processes/by-id/:id',
    spec: catalogHttp.updateProcess,
    summary: 'Change settings (and, with nodes and edges, the whole graph). 423 while locked.' + IF_MATCH,
    tag: PROCESSES,
    bodySchema: updateProcessBodySchema,
    processParam: 'id',
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/processes/by-id/:id',
    spec: catalogHttp.deleteProcess,
    summary: 'Delete a process and its versions. 423 while locked.' + IF_MATCH,
    tag: PROCESSES,
    processParam: 'id',
    successStatus: 204,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/:id/nodes',
    spec: catalogHttp.addNode,
    summary: 'Add a node; its id is generated unless a valid unused UUID is given. Answers the node.' + IF_MATCH,
    tag: GRAPH,
    bodySchema: nodeInputSchema,
    processParam: 'id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'PUT',
    path: '/api/v1/processes/:id/nodes/:node_id',
    spec: catalogHttp.updateNode,
    summary:
      "Change a node's type, position and/or config. Renaming config.label rewrites every template that references it." +
      IF_MATCH,
    tag: GRAPH,
    bodySchema: updateNodeBodySchema,
    processParam: 'id',
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/processes/:id/nodes/:node_id',
    spec: catalogHttp.deleteNode,
    summary: 'Delete a node and its edges. Answers the process record.' + IF_MATCH,
    tag: GRAPH,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/:id/edges',
    spec: catalogHttp.addEdge,
    summary:
      'Connect two nodes of the process; handles default to output/input and must exist on the source node type. Answers the edge.' +
      IF_MATCH,
    tag: GRAPH,
    bodySchema: edgeInputSchema,
    processParam: 'id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/processes/:id/edges/:edge_id',
    spec: catalogHttp.deleteEdge,
    summary: 'Delete an edge. Answers the process record.' + IF_MATCH,
    tag: GRAPH,
    processParam: 'id',
  }),
  httpRoute({
    method: 'PUT',
    path: '/api/v1/processes/:id/graph',
    spec: catalogHttp.replaceGraph,
    summary:
      'Replace all nodes and edges at once, as a canvas saves. Node ids that are not UUIDs are local keys, replaced by new UUIDs.' +
      IF_MATCH,
    tag: GRAPH,
    bodySchema: replaceGraphBodySchema,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/lock/:id',
    spec: catalogHttp.lockProcess,
    summary: 'Lock a process: every node, edge and settings change answers 423 until unlocked.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/unlock/:id',
    spec: catalogHttp.unlockProcess,
    summary: 'Unlock a process.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/start/:id',
    spec: catalogHttp.startProcess,
    summary: 'Set is_running (the trigger service starts the listeners). 400 with the lint findings when lint fails.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/stop/:id',
    spec: catalogHttp.stopProcess,
    summary: 'Clear is_running; listeners stop, executions in flight finish.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/:id/lint',
    spec: catalogHttp.lintProcess,
    summary: 'Lint the graph: {valid, findings: [{check, severity, message, nodeId?, edgeId?}]}.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/:id/history',
    spec: catalogHttp.processHistory,
    summary:
      'Audit history: every event of the process with type, time, actor, revision and trace id. Query: page, pageSize.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/:id/export',
    spec: catalogHttp.exportProcess,
    summary:
      'Export document (camelCase) with every referenced schema inline in schemaDependencies; bulk-import accepts it unchanged.',
    tag: PROCESSES,
    processParam: 'id',
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/bulk-import/:orgId',
    spec: catalogHttp.importProcesses,
    createsProcess: true,
    summary:
      'Import one export document (201, the new process) or an array of them (200, a result per document). Missing schemas are created from schemaDependencies, existing ones reused; a malformed document is rejected whole with every problem listed.',
    tag: PROCESSES,
    bodySchema: bulkImportBodySchema,
    orgParam: 'orgId',
    successStatus: 201,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/fork/:id',
    spec: catalogHttp.forkProcess,
    createsProcess: true,
    summary: 'Duplicate a process (nodes, edges, configs; new ids) under a new name. Schema references are shared.',
    tag: PROCESSES,
    bodySchema: forkProcessBodySchema,
    processParam: 'id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/versions/:process_id',
    spec: catalogHttp.createVersion,
    summary: 'Capture the current graph as the next numbered version.',
    tag: VERSIONS,
    bodySchema: createVersionBodySchema,
    processParam: 'process_id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/versions/:process_id',
    spec: catalogHttp.listVersions,
    summary: 'Versions of a process, newest first.',
    tag: VERSIONS,
    processParam: 'process_id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/version/:version_id',
    spec: catalogHttp.getVersion,
    summary: 'One version with its snapshot.',
    tag: VERSIONS,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/version/:version_id/restore',
    spec: catalogHttp.restoreVersion,
    summary: 'Replace all nodes and edges with the snapshot (no new version is created). 423 while locked.',
    tag: VERSIONS,
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/processes/version/:version_id',
    spec: catalogHttp.deleteVersion,
    summary: 'Delete a version permanently.',
    tag: VERSIONS,
    successStatus: 204,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/connections/by-org/:org_id',
    spec: catalogHttp.createConnection,
    unrestrictedOnly: true,
    summary: 'Store credentials (encrypted at rest) for triggers and nodes. The secret data is never returned.',
    tag: CONNECTIONS,
    bodySchema: createConnectionBodySchema,
    orgParam: 'org_id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/connections/by-org/:org_id',
    spec: catalogHttp.listConnections,
    unrestrictedOnly: true,
    summary: 'Connections of an organization (without secrets). Query: page, pageSize.',
    tag: CONNECTIONS,
    orgParam: 'org_id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/connections/by-id/:id',
    spec: catalogHttp.getConnection,
    unrestrictedOnly: true,
    summary: 'One connection (without secrets).',
    tag: CONNECTIONS,
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/connections/by-id/:id',
    spec: catalogHttp.deleteConnection,
    unrestrictedOnly: true,
    summary: 'Delete a connection and its encrypted secret.',
    tag: CONNECTIONS,
    successStatus: 204,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/connections/oauth/:provider/start',
    spec: catalogHttp.startOAuthConsent,
    unrestrictedOnly: true,
    summary:
      'Begin connecting a mail account (provider gmail or outlook) to the connection named by `connectionName` ' +
      '(created beforehand with data {clientId, clientSecret[, tenantId]}). Query: connectionName, redirectUri. ' +
      'Answers {url, state, expiresAt}: open `url` to consent; PKCE verifier and state stay on the server.',
    tag: CONNECTIONS,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/connections/oauth/:provider/callback',
    spec: catalogHttp.finishOAuthConsent,
    unrestrictedOnly: true,
    summary:
      'Finish the consent: query `code` and `state` from the provider redirect. Exchanges the code (with the PKCE ' +
      'verifier) and stores the refresh token encrypted in the connection. Answers the connection (no secrets).',
    tag: CONNECTIONS,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/schemas/by-org/:org_id',
    spec: catalogHttp.createSchema,
    summary: 'Create a schema with data blocks [{id?, name, description, jsonSchema}]; every jsonSchema must compile.',
    tag: SCHEMAS,
    bodySchema: createSchemaBodySchema,
    orgParam: 'org_id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/schemas/by-org/:org_id',
    spec: catalogHttp.listSchemas,
    summary: 'Schemas of an organization by name. Query: page, pageSize, search, collectionId.',
    tag: SCHEMAS,
    orgParam: 'org_id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/schemas/by-id/:id',
    spec: catalogHttp.getSchema,
    summary: 'One schema with its data blocks.',
    tag: SCHEMAS,
  }),
  httpRoute({
    method: 'PUT',
    path: '/api/v1/schemas/by-id/:id',
    spec: catalogHttp.updateSchema,
    summary: 'Change name, description and/or the whole list of data blocks.',
    tag: SCHEMAS,
    bodySchema: updateSchemaBodySchema,
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/schemas/by-id/:id',
    spec: catalogHttp.deleteSchema,
    summary: 'Delete a schema (processes that reference it then fail lint check 5).',
    tag: SCHEMAS,
    successStatus: 204,
  }),
  ...collectionRoutes('process'),
  ...collectionRoutes('schema'),
];

/** Both collection tables of the spec: same shape, separate sets. */
function collectionRoutes(kind: 'process' | 'schema'): HttpRoute[] {
  const base = `/api/v1/${kind}-collections`;
  const tag = kind === 'process' ? 'Process collections' : 'Schema collections';
  const member = kind === 'process' ? 'pid' : 'sid';
  const subjects =
    kind === 'process'
      ? {
          create: catalogHttp.createProcessCollection,
          list: catalogHttp.listProcessCollections,
          get: catalogHttp.getProcessCollection,
          update: catalogHttp.updateProcessCollection,
          delete: catalogHttp.deleteProcessCollection,
          add: catalogHttp.addProcessToCollection,
          remove: catalogHttp.removeProcessFromCollection,
        }
      : {
          create: catalogHttp.createSchemaCollection,
          list: catalogHttp.listSchemaCollections,
          get: catalogHttp.getSchemaCollection,
          update: catalogHttp.updateSchemaCollection,
          delete: catalogHttp.deleteSchemaCollection,
          add: catalogHttp.addSchemaToCollection,
          remove: catalogHttp.removeSchemaFromCollection,
        };
  const route = (
    method: HttpMethod,
    path: string,
    spec: RequestSpec<HttpCall, HttpReply>,
    summary: string,
    extra: Partial<HttpRoute> = {},
  ): HttpRoute => httpRoute({ method, path: `${base}${path}`, spec, summary, tag, ...extra });
  return [
    route(
      'POST',
      '/by-org/:org_id',
      subjects.create,
      `Create a ${kind} collection, optionally nested under parentCollectionId.`,
      {
        bodySchema: createCollectionBodySchema,
        orgParam: 'org_id',
        successStatus: 201,
      },
    ),
    route(
      'GET',
      '/by-org/:org_id',
      subjects.list,
      'Flat list with parentCollectionId (query page, pageSize), or `?tree=true` for the nested tree.',
      {
        orgParam: 'org_id',
      },
    ),
    route('GET', '/by-id/:id', subjects.get, `One collection with its ${kind}s (members); records viewedAt.`),
    route(
      'PUT',
      '/by-id/:id',
      subjects.update,
      'Rename, describe or move (parentCollectionId); 400 when it would become its own ancestor.',
      {
        bodySchema: updateCollectionBodySchema,
      },
    ),
    route(
      'DELETE',
      '/by-id/:id',
      subjects.delete,
      `Delete the collection and its memberships (the ${kind}s stay); child collections move up to its parent.`,
      {
        successStatus: 204,
      },
    ),
    route(
      'POST',
      `/:id/add-${kind}/:${member}`,
      subjects.add,
      `Add a ${kind} to the collection (idempotent).`,
      kind === 'process' ? { processParam: member } : {},
    ),
    route(
      'DELETE',
      `/:id/remove-${kind}/:${member}`,
      subjects.remove,
      `Remove a ${kind} from the collection (idempotent).`,
      kind === 'process' ? { processParam: member } : {},
    ),
  ];
}
