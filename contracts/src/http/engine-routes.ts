import { engineHttp } from '../bus/engine-subjects.js';
import { httpRoute, type HttpRoute } from './http-route.js';

const TAG = 'Executions';

/** Public HTTP routes served by the engine. */
export const engineRoutes: HttpRoute[] = [
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/test/:processId',
    spec: engineHttp.testProcess,
    summary:
      'Run one execution with the body as input data, without starting listeners. Query: inputNodeId (which input node fires), waitSeconds (default 30). Answers the finished execution record, or 202 {execution_id, status} when it outlasts the wait.',
    tag: TAG,
    processParam: 'processId',
    successStatus: 200,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/executions/:processId',
    spec: engineHttp.listExecutions,
    summary: 'Execution history of a process, newest first. Query: page, pageSize, status, from, to (ISO times).',
    tag: TAG,
    processParam: 'processId',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/execution/:id',
    spec: engineHttp.getExecution,
    summary: 'One execution record with node states and graph snapshot.',
    tag: TAG,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/execution/:id/cancel',
    spec: engineHttp.cancelExecution,
    summary: 'Cancel a running execution; its running nodes are stopped. 409 when it already finished.',
    tag: TAG,
    successStatus: 200,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/execution-stats/:processId',
    spec: engineHttp.executionStats,
    summary: 'Execution statistics: runs per status, success rate, average and p95 duration, failure breakdown.',
    tag: TAG,
    processParam: 'processId',
  }),
];
