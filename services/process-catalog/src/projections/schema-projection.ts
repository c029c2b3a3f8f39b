import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { SCHEMA_EVENT_TYPES, type SchemaEvent } from '../domain/schema/events.js';
import { evolveSchema, initialSchemaState, type SchemaState } from '../domain/schema/state.js';
import { parseJson } from './process-projection.js';

/** Schemas with their data blocks. */
export const schemaProjection: Projection = {
  name: 'catalog-schemas',
  eventTypes: SCHEMA_EVENT_TYPES,
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('schema-')) return;
    const event = { type: stored.type, data: stored.data } as SchemaEvent;
    const id = stored.streamId.slice('schema-'.length);
    if (event.type === 'SchemaDeleted') {
      await db.deleteFrom('catalog_schemas').where('id', '=', id).execute();
      return;
    }
    const row = await db.selectFrom('catalog_schemas').select('state').where('id', '=', id).executeTakeFirst();
    const state = evolveSchema(row ? (parseJson(row.state) as SchemaState) : initialSchemaState(), event);
    const values = {
      organization_id: state.organizationId,
      name: state.name,
      revision: stored.streamVersion,
      state: JSON.stringify(state),
    };
    if (row) await db.updateTable('catalog_schemas').set(values).where('id', '=', id).execute();
    else
      await db
        .insertInto('catalog_schemas')
        .values({ id, ...values })
        .execute();
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('catalog_schemas').execute();
  },
};
