import { testingHttp } from '../bus/testing-subjects.js';
import { testBatchBodySchema, testCaseBodySchema } from '../testing/test-case-schemas.js';
import { httpRoute, type HttpRoute } from './http-route.js';

const TAG = 'Testing';

/** Public HTTP routes served by the testing service (docs/testing.md). */
export const testingRoutes: HttpRoute[] = [
  httpRoute({
    method: 'POST',
    path: '/api/v1/test-cases/by-process/:process_id',
    spec: testingHttp.createTestCase,
    summary:
      'Create a test case: inputNodeId must be an input node of the process, expectedOutputSchema must compile, ignoreFields are JSONPaths.',
    tag: TAG,
    bodySchema: testCaseBodySchema,
    processParam: 'process_id',
    successStatus: 201,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-cases/by-process/:process_id',
    spec: testingHttp.listTestCases,
    summary:
      'The test cases of a process by name. Query: page, pageSize, tag (repeatable: any of), disabled (true|false).',
    tag: TAG,
    processParam: 'process_id',
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-cases/by-id/:id',
    spec: testingHttp.getTestCase,
    summary: 'One test case.',
    tag: TAG,
  }),
  httpRoute({
    method: 'PUT',
    path: '/api/v1/test-cases/by-id/:id',
    spec: testingHttp.updateTestCase,
    summary: 'Replace a test case (every field as on create).',
    tag: TAG,
    bodySchema: testCaseBodySchema,
  }),
  httpRoute({
    method: 'DELETE',
    path: '/api/v1/test-cases/by-id/:id',
    spec: testingHttp.deleteTestCase,
    summary: 'Delete a test case; its past runs stay readable.',
    tag: TAG,
    successStatus: 204,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/test-execution/:test_case_id/run',
    spec: testingHttp.runTestCase,
    summary:
      'Run one test case through the engine (inputData as the output of its input node, no listener) and answer the finished test run: passed, failed (validationResults), error or timeout.',
    tag: TAG,
    successStatus: 200,
  }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/test-runs/batch',
    spec: testingHttp.runBatch,
    summary:
      'System keys only. Run the test cases of a process chosen by testCaseIds and/or tags (the union; neither: every case); disabled cases are skipped. Query waitSeconds (default 30): answers 200 with every run and the statistics when done by then, else 202 with the progress so far (GET /test-runs/batches/:id).',
    tag: TAG,
    bodySchema: testBatchBodySchema,
    systemOnly: true,
    successStatus: 200,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-runs/batches/:batch_id',
    spec: testingHttp.getBatch,
    summary: 'A batch: status, total, done, skipped cases, the runs so far and their statistics.',
    tag: TAG,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-runs/stats',
    spec: testingHttp.testRunStats,
    summary:
      'Test statistics {total, passed, failed, error, timeout, passRate (fraction of 1), averageDuration (seconds)}. Query: processId, from, to (ISO times).',
    tag: TAG,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-runs',
    spec: testingHttp.listTestRuns,
    summary: 'Test runs, newest first. Query: processId, testCaseId, status, page, pageSize.',
    tag: TAG,
  }),
  // The spec writes the list as `/test-runs/`; both spellings answer.
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-runs/',
    spec: testingHttp.listTestRuns,
    summary: 'Same as GET /api/v1/test-runs.',
    tag: TAG,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/test-runs/:test_run_id',
    spec: testingHttp.getTestRun,
    summary: "A test run with its validation results, actual output, file comparison and the execution's node states.",
    tag: TAG,
  }),
];
