import type { TestRun } from '@weft/contracts';
import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { TEST_RUN_EVENT_TYPES, type TestRunEvent } from '../domain/test-run/test-run-events.js';
import { parseJson } from './json-column.js';

/** Test runs as the API shows them, with the columns the list, stats and batch progress filter on. */
export const testRunProjection: Projection = {
  name: 'testing-test-runs',
  eventTypes: TEST_RUN_EVENT_TYPES,
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const id = stored.streamId.slice('testrun-'.length);
    const event = { type: stored.type, data: stored.data } as TestRunEvent;
    if (event.type === 'TestRunStarted') {
      const run: TestRun = {
        id,
        ...event.data,
        processExecutionId: event.data.executionId,
        status: 'running',
        completedAt: null,
        durationSeconds: null,
        durationMs: null,
        validationResults: null,
        actualOutput: null,
        schemaErrors: [],
        fileComparisonResults: null,
        errorMessage: null,
      };
      await db
        .insertInto('testing_test_runs')
        .values({
          id,
          test_case_id: run.testCaseId,
          process_id: run.processId,
          organization_id: run.organizationId,
          batch_id: run.batchId,
          status: run.status,
          started_at: run.startedAt,
          duration_ms: null,
          document: JSON.stringify(run),
        })
        .execute();
      return;
    }
    const row = await db.selectFrom('testing_test_runs').select('document').where('id', '=', id).executeTakeFirst();
    if (!row) return;
    const { durationMs, ...outcome } = event.data;
    const run: TestRun = {
      ...parseJson<TestRun>(row.document),
      ...outcome,
      durationMs,
      durationSeconds: Math.round(durationMs / 1000),
    };
    await db
      .updateTable('testing_test_runs')
      .set({ status: run.status, duration_ms: durationMs, document: JSON.stringify(run) })
      .where('id', '=', id)
      .execute();
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('testing_test_runs').execute();
  },
};
