import type { TestCase } from '@weft/contracts';
import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { TEST_CASE_EVENT_TYPES, type TestCaseEvent } from '../domain/test-case/test-case-events.js';
import { evolveTestCase, type TestCaseState } from '../domain/test-case/test-case-state.js';
import { parseJson } from './json-column.js';

/** Test cases as the API shows them; a deleted case leaves the table. */
export const testCaseProjection: Projection = {
  name: 'testing-test-cases',
  eventTypes: TEST_CASE_EVENT_TYPES,
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const id = stored.streamId.slice('testcase-'.length);
    const event = { type: stored.type, data: stored.data } as TestCaseEvent;
    const row = await db.selectFrom('testing_test_cases').select('document').where('id', '=', id).executeTakeFirst();
    const before: TestCaseState = row
      ? { ...parseJson<TestCase>(row.document), exists: true, deleted: false }
      : { exists: false };
    const state = evolveTestCase(before, event);
    if (!state.exists || state.deleted) {
      await db.deleteFrom('testing_test_cases').where('id', '=', id).execute();
      return;
    }
    const document: TestCase = {
      id,
      processId: state.processId,
      organizationId: state.organizationId,
      name: state.name,
      description: state.description,
      inputNodeId: state.inputNodeId,
      inputData: state.inputData,
      expectedOutputSchema: state.expectedOutputSchema,
      expectedFiles: state.expectedFiles,
      ignoreFields: state.ignoreFields,
      tags: state.tags,
      disabled: state.disabled,
      createdBy: state.createdBy,
      createdById: state.createdById,
      createdAt: state.createdAt,
      updatedAt: state.updatedAt,
      revision: stored.streamVersion,
    };
    const values = {
      process_id: document.processId,
      organization_id: document.organizationId,
      name: document.name,
      tags: JSON.stringify(document.tags),
      disabled: document.disabled,
      document: JSON.stringify(document),
    };
    if (row) await db.updateTable('testing_test_cases').set(values).where('id', '=', id).execute();
    else
      await db
        .insertInto('testing_test_cases')
        .values({ id, ...values })
        .execute();
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('testing_test_cases').execute();
  },
};
