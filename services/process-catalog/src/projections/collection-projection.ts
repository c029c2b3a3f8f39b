import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { COLLECTION_EVENT_TYPES, type CollectionEvent } from '../domain/collection/events.js';
import { evolveCollection, initialCollectionState, type CollectionState } from '../domain/collection/state.js';
import { parseJson } from './process-projection.js';

const memberTable = (kind: CollectionState['kind']) =>
  kind === 'process'
    ? ({ table: 'catalog_process_collection_members', column: 'process_id' } as const)
    : ({ table: 'catalog_schema_collection_members', column: 'schema_id' } as const);

/**
 * Collections (both kinds) and their memberships. It owns the membership tables, so it also
 * drops the memberships of a deleted process or schema (and a rebuild of it alone stays right).
 */
export const collectionProjection: Projection = {
  name: 'catalog-collections',
  eventTypes: [...COLLECTION_EVENT_TYPES, 'ProcessDeleted', 'SchemaDeleted'],
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    if (stored.type === 'ProcessDeleted' && stored.streamId.startsWith('process-')) {
      const processId = stored.streamId.slice('process-'.length);
      await db.deleteFrom('catalog_process_collection_members').where('process_id', '=', processId).execute();
      return;
    }
    if (stored.type === 'SchemaDeleted' && stored.streamId.startsWith('schema-')) {
      const schemaId = stored.streamId.slice('schema-'.length);
      await db.deleteFrom('catalog_schema_collection_members').where('schema_id', '=', schemaId).execute();
      return;
    }
    if (!stored.streamId.startsWith('collection-')) return;
    const event = { type: stored.type, data: stored.data } as CollectionEvent;
    const id = stored.streamId.slice('collection-'.length);
    const row = await db.selectFrom('catalog_collections').select('state').where('id', '=', id).executeTakeFirst();
    const state = evolveCollection(row ? (parseJson(row.state) as CollectionState) : initialCollectionState(), event);
    const members = memberTable(state.kind);
    switch (event.type) {
      case 'CollectionDeleted':
        await db.deleteFrom('catalog_collections').where('id', '=', id).execute();
        await db.deleteFrom(members.table).where('collection_id', '=', id).execute();
        await db.deleteFrom('catalog_collection_views').where('collection_id', '=', id).execute();
        return;
      case 'CollectionMemberAdded':
        await db
          .insertInto(members.table)
          .values({ collection_id: id, [members.column]: event.data.memberId })
          .onConflict((conflict) => conflict.doNothing())
          .execute();
        break;
      case 'CollectionMemberRemoved':
        await db
          .deleteFrom(members.table)
          .where('collection_id', '=', id)
          .where(members.column, '=', event.data.memberId)
          .execute();
        break;
      // CollectionViewed: appended by views before decision 0004; still folded into state.viewedAt.
      case 'CollectionCreated':
      case 'CollectionChanged':
      case 'CollectionViewed':
        break;
      default: {
        const unknownEvent: never = event;
        return unknownEvent;
      }
    }
    const values = {
      kind: state.kind,
      organization_id: state.organizationId,
      parent_collection_id: state.parentCollectionId,
      name: state.name,
      revision: stored.streamVersion,
      state: JSON.stringify(state),
    };
    if (row) await db.updateTable('catalog_collections').set(values).where('id', '=', id).execute();
    else
      await db
        .insertInto('catalog_collections')
        .values({ id, ...values })
        .execute();
  },
  // catalog_collection_views is not derived from events, so a rebuild keeps it.
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('catalog_collections').execute();
    await db.deleteFrom('catalog_process_collection_members').execute();
    await db.deleteFrom('catalog_schema_collection_members').execute();
  },
};
