import type { HttpCall, HttpReply } from '../http/http-route.js';
import { request, type RequestSpec } from './message-spec.js';

const http = (name: string): RequestSpec<HttpCall, HttpReply> =>
  request<HttpCall, HttpReply>(`weft.catalog.http.${name}`, ['gateway'], 'process-catalog');

/** Public HTTP endpoints of the process catalog: the gateway sends, the catalog answers. */
export const catalogHttp = {
  createProcess: http('process.create'),
  listProcesses: http('process.list'),
  getProcess: http('process.get'),
  updateProcess: http('process.update'),
  deleteProcess: http('process.delete'),
  addNode: http('process.node.add'),
  updateNode: http('process.node.update'),
  deleteNode: http('process.node.delete'),
  addEdge: http('process.edge.add'),
  deleteEdge: http('process.edge.delete'),
  replaceGraph: http('process.graph.replace'),
  lockProcess: http('process.lock'),
  unlockProcess: http('process.unlock'),
  startProcess: http('process.start'),
  stopProcess: http('process.stop'),
  lintProcess: http('process.lint'),
  processHistory: http('process.history'),
  exportProcess: http('process.export'),
  importProcesses: http('process.import'),
  forkProcess: http('process.fork'),
  createVersion: http('version.create'),
  listVersions: http('version.list'),
  getVersion: http('version.get'),
  restoreVersion: http('version.restore'),
  deleteVersion: http('version.delete'),
  createSchema: http('schema.create'),
  listSchemas: http('schema.list'),
  getSchema: http('schema.get'),
  updateSchema: http('schema.update'),
  deleteSchema: http('schema.delete'),
  createProcessCollection: http('process-collection.create'),
  listProcessCollections: http('process-collection.list'),
  getProcessCollection: http('process-collection.get'),
  updateProcessCollection: http('process-collection.update'),
  deleteProcessCollection: http('process-collection.delete'),
  addProcessToCollection: http('process-collection.add-member'),
  removeProcessFromCollection: http('process-collection.remove-member'),
  createSchemaCollection: http('schema-collection.create'),
  listSchemaCollections: http('schema-collection.list'),
  getSchemaCollection: http('schema-collection.get'),
  updateSchemaCollection: http('schema-collection.update'),
  deleteSchemaCollection: http('schema-collection.delete'),
  addSchemaToCollection: http('schema-collection.add-member'),
  removeSchemaFromCollection: http('schema-collection.remove-member'),
  createConnection: http('connection.create'),
  listConnections: http('connection.list'),
  getConnection: http('connection.get'),
  deleteConnection: http('connection.delete'),
};

export type CatalogHttpRouteName = keyof typeof catalogHttp;
