import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import { toProcessEvent } from './stored-process-event.js';

/** Versions as their own read model (spec "Process Version"), snapshots included. */
export const versionProjection: Projection = {
  name: 'catalog-process-versions',
  eventTypes: ['VersionCreated', 'VersionDeleted', 'ProcessDeleted'],
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const event = toProcessEvent(stored);
    if (!event) return;
    const processId = stored.streamId.slice('process-'.length);
    switch (event.type) {
      case 'VersionCreated': {
        await db
          .insertInto('catalog_process_versions')
          .values({
            id: event.data.versionId,
            process_id: processId,
            organization_id: String(stored.metadata.organizationId ?? ''),
            version_number: event.data.versionNumber,
            label: event.data.label,
            snapshot: JSON.stringify(event.data.snapshot),
            created_by: event.data.createdBy,
            created_by_id: event.data.createdById,
            created_at: event.data.at,
          })
          .execute();
        break;
      }
      case 'VersionDeleted':
        // Delete is permanent in the read model; the event log keeps the audit trail.
        await db.deleteFrom('catalog_process_versions').where('id', '=', event.data.versionId).execute();
        break;
      case 'ProcessDeleted':
        await db.deleteFrom('catalog_process_versions').where('process_id', '=', processId).execute();
        break;
      case 'ProcessCreated':
      case 'ProcessSettingsChanged':
      case 'NodeAdded':
      case 'NodeUpdated':
      case 'NodeDeleted':
      case 'EdgeAdded':
      case 'EdgeDeleted':
      case 'GraphReplaced':
      case 'ProcessLocked':
      case 'ProcessUnlocked':
      case 'ProcessStarted':
      case 'ProcessStopped':
      case 'VersionRestored':
        break;
      default: {
        const unknownEvent: never = event;
        return unknownEvent;
      }
    }
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('catalog_process_versions').execute();
  },
};
