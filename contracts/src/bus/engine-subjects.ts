import type { ExecutionRecord } from '../engine/execution-record.js';
import type { ExecutionRequest } from '../engine/execution-request.js';
import type { HttpCall, HttpReply } from '../http/http-route.js';
import { request, workQueue } from './message-spec.js';

/** JetStream stream holding the engine's work queue. */
export const EXECUTIONS_STREAM = 'WEFT_EXECUTIONS';

/** Work the engine takes from JetStream (in-memory queue when embedded). */
export const engineQueues = {
  /** One execution to run; any engine replica takes it; acked once ExecutionStarted is stored. */
  executionRequests: workQueue<ExecutionRequest>(
    EXECUTIONS_STREAM,
    'weft.engine.executions.requested',
    ['trigger', 'testing', 'engine'],
    'engine',
  ),
};

/** Subjects the engine serves to other services (never exposed over HTTP). */
export const engineInternal = {
  /**
   * Enqueue an execution and wait up to `waitSeconds` for it to finish: the trigger uses it for
   * synchronous webhooks, the testing service for test runs. Replies with the record as it is then
   * (status `running` when it outlasted the wait). 404 problem when the process is unknown.
   */
  runExecution: request<ExecutionRequest & { waitSeconds?: number }, ExecutionRecord>(
    'weft.engine.internal.execution.run',
    ['trigger', 'testing'],
    'engine',
  ),
  /** The full record of one execution; 404 problem when unknown or another organization's. */
  getExecution: request<{ executionId: string; organizationId?: string }, ExecutionRecord>(
    'weft.engine.internal.execution.get',
    ['trigger', 'testing'],
    'engine',
  ),
};

/** Subjects behind the engine's public HTTP routes (contracts/src/http/engine-routes.ts). */
export const engineHttp = {
  testProcess: request<HttpCall, HttpReply>('weft.engine.http.process.test', ['gateway'], 'engine'),
  listExecutions: request<HttpCall, HttpReply>('weft.engine.http.executions.list', ['gateway'], 'engine'),
  getExecution: request<HttpCall, HttpReply>('weft.engine.http.execution.get', ['gateway'], 'engine'),
  cancelExecution: request<HttpCall, HttpReply>('weft.engine.http.execution.cancel', ['gateway'], 'engine'),
  executionStats: request<HttpCall, HttpReply>('weft.engine.http.execution.stats', ['gateway'], 'engine'),
};
