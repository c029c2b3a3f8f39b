import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { CONNECTION_EVENT_TYPES, type ConnectionEvent } from '../domain/connection/events.js';

/** Connections without their secrets for lists, plus the sealed data for the internal secret subject. */
export const connectionProjection: Projection = {
  name: 'catalog-connections',
  eventTypes: CONNECTION_EVENT_TYPES,
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    if (!stored.streamId.startsWith('connection-')) return;
    const event = { type: stored.type, data: stored.data } as ConnectionEvent;
    const id = stored.streamId.slice('connection-'.length);
    switch (event.type) {
      case 'ConnectionCreated':
        await db
          .insertInto('catalog_connections')
          .values({
            id,
            organization_id: event.data.organizationId,
            type: event.data.connectionType,
            name: event.data.name,
            sealed_data: JSON.stringify(event.data.sealedData),
            created_by: event.data.createdBy,
            created_by_id: event.data.createdById,
            created_at: event.data.at,
          })
          .execute();
        break;
      case 'ConnectionDataReplaced':
        await db
          .updateTable('catalog_connections')
          .set({ sealed_data: JSON.stringify(event.data.sealedData) })
          .where('id', '=', id)
          .execute();
        break;
      case 'ConnectionDeleted':
        await db.deleteFrom('catalog_connections').where('id', '=', id).execute();
        break;
      default: {
        const unknownEvent: never = event;
        return unknownEvent;
      }
    }
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('catalog_connections').execute();
  },
};
