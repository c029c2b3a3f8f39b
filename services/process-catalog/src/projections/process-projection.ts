import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { PROCESS_EVENT_TYPES } from '../domain/process/events.js';
import { evolve, initialProcessState, type ProcessState } from '../domain/process/state.js';
import { toProcessEvent } from './stored-process-event.js';

/**
 * Inline projection of process streams into `catalog_processes`: the folded state as JSON plus
 * the columns lists filter on. The stream version becomes the record's revision.
 */
export const processProjection: Projection = {
  name: 'catalog-processes',
  eventTypes: PROCESS_EVENT_TYPES,
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const event = toProcessEvent(stored);
    if (!event) return;
    const id = stored.streamId.slice('process-'.length);
    if (event.type === 'ProcessDeleted') {
      await db.deleteFrom('catalog_processes').where('id', '=', id).execute();
      return;
    }
    const row = await db.selectFrom('catalog_processes').select('state').where('id', '=', id).executeTakeFirst();
    const before = row ? (parseJson(row.state) as ProcessState) : initialProcessState();
    const state = evolve(before, event);
    const values = {
      organization_id: state.organizationId,
      name: state.name,
      revision: stored.streamVersion,
      state: JSON.stringify(state),
      created_at: state.createdAt,
      updated_at: state.updatedAt,
    };
    if (row) await db.updateTable('catalog_processes').set(values).where('id', '=', id).execute();
    else
      await db
        .insertInto('catalog_processes')
        .values({ id, ...values })
        .execute();
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('catalog_processes').execute();
  },
};

/** pg returns jsonb parsed; PGlite too, but tolerate a string from either. */
export const parseJson = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value);
