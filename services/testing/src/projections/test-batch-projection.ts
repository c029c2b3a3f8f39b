import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { TEST_BATCH_EVENT_TYPES, type TestBatchEvent } from '../domain/test-run/test-run-events.js';
import { parseJson } from './json-column.js';

/** A batch's plan and state; its progress is counted from the runs that carry its id. */
export type BatchRow = Extract<TestBatchEvent, { type: 'TestBatchStarted' }>['data'] & {
  id: string;
  status: 'running' | 'completed';
  completedAt: string | null;
};

export const testBatchProjection: Projection = {
  name: 'testing-batches',
  eventTypes: TEST_BATCH_EVENT_TYPES,
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const id = stored.streamId.slice('testbatch-'.length);
    const event = { type: stored.type, data: stored.data } as TestBatchEvent;
    if (event.type === 'TestBatchStarted') {
      const batch: BatchRow = { id, ...event.data, status: 'running', completedAt: null };
      await db
        .insertInto('testing_batches')
        .values({
          id,
          process_id: batch.processId,
          organization_id: batch.organizationId,
          status: batch.status,
          document: JSON.stringify(batch),
        })
        .execute();
      return;
    }
    const row = await db.selectFrom('testing_batches').select('document').where('id', '=', id).executeTakeFirst();
    if (!row) return;
    const batch: BatchRow = {
      ...parseJson<BatchRow>(row.document),
      status: 'completed',
      completedAt: event.data.completedAt,
    };
    await db
      .updateTable('testing_batches')
      .set({ status: batch.status, document: JSON.stringify(batch) })
      .where('id', '=', id)
      .execute();
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('testing_batches').execute();
  },
};
