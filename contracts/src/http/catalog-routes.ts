import { catalogHttp } from '../bus/catalog-subjects.js';
import {
  createProcessBodySchema,
  createVersionBodySchema,
  edgeInputSchema,
  nodeInputSchema,
  replaceGraphBodySchema,
  updateNodeBodySchema,
  updateProcessBodySchema,
} from '../catalog/catalog-request-schemas.js';
import { httpRoute, type HttpRoute } from './http-route.js';

const PROCESSES = 'Processes';
const GRAPH = 'Process graph';
const VERSIONS = 'Process versions';
const IF_MATCH = ' Send `If-Match: <revision>` to fail with 409 instead of overwriting a newer revision.';

/** Public HTTP routes served by the process catalog (docs/catalog.md). */
export const catalogRoutes: HttpRoute[] = [
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/by-org/:org_id',
    spec: catalogHttp.createProcess,
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
];
