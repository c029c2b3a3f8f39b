import type { HttpCall, HttpReply } from '../http/http-route.js';
import type { ExportedTestCase } from '../testing/test-case.js';
import { request } from './message-spec.js';

/** Subjects behind the testing service's public HTTP routes (contracts/src/http/testing-routes.ts). */
export const testingHttp = {
  createTestCase: request<HttpCall, HttpReply>('weft.testing.http.case.create', ['gateway'], 'testing'),
  listTestCases: request<HttpCall, HttpReply>('weft.testing.http.case.list', ['gateway'], 'testing'),
  getTestCase: request<HttpCall, HttpReply>('weft.testing.http.case.get', ['gateway'], 'testing'),
  updateTestCase: request<HttpCall, HttpReply>('weft.testing.http.case.update', ['gateway'], 'testing'),
  deleteTestCase: request<HttpCall, HttpReply>('weft.testing.http.case.delete', ['gateway'], 'testing'),
  runTestCase: request<HttpCall, HttpReply>('weft.testing.http.case.run', ['gateway'], 'testing'),
  runBatch: request<HttpCall, HttpReply>('weft.testing.http.batch.run', ['gateway'], 'testing'),
  getBatch: request<HttpCall, HttpReply>('weft.testing.http.batch.get', ['gateway'], 'testing'),
  listTestRuns: request<HttpCall, HttpReply>('weft.testing.http.run.list', ['gateway'], 'testing'),
  getTestRun: request<HttpCall, HttpReply>('weft.testing.http.run.get', ['gateway'], 'testing'),
  testRunStats: request<HttpCall, HttpReply>('weft.testing.http.run.stats', ['gateway'], 'testing'),
};

/** Subjects the testing service serves to the catalog, so test cases travel with export, import and fork. */
export const testingInternal = {
  /** The test cases of a process, as an export document carries them (`inputNodeId` is the node's id). */
  exportTestCases: request<{ processId: string; organizationId: string }, { testCases: ExportedTestCase[] }>(
    'weft.testing.internal.cases.export',
    ['process-catalog'],
    'testing',
  ),
  /**
   * Creates the given test cases on a newly imported or forked process; `inputNodeId` already names
   * the new process's node. Idempotent per `requestId` (a retried import creates no duplicates).
   */
  importTestCases: request<
    {
      requestId: string;
      processId: string;
      organizationId: string;
      actor: { userId: string; userName: string };
      testCases: ExportedTestCase[];
    },
    { testCaseIds: string[] }
  >('weft.testing.internal.cases.import', ['process-catalog'], 'testing'),
};
