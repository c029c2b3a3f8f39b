import type { Projection, StoredEvent, Trx } from '@weft/event-store';
import type { ApiKeyEvent } from '../domain/api-key/events.js';
import type { OrganizationEvent } from '../domain/organization/events.js';

/** Organizations read model: one row per OrganizationCreated. */
export const organizationsProjection: Projection = {
  name: 'gateway-organizations',
  eventTypes: ['OrganizationCreated'],
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const event = { type: stored.type, data: stored.data } as OrganizationEvent;
    switch (event.type) {
      case 'OrganizationCreated':
        await db
          .insertInto('gateway_organizations')
          .values({
            id: event.data.organizationId,
            name: event.data.name,
            created_by: event.data.createdBy,
            created_by_id: event.data.createdById,
            created_at: event.data.createdAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      default: {
        const unknownEvent: never = event.type;
        return unknownEvent;
      }
    }
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('gateway_organizations').execute();
  },
};

/** API keys read model: hashes only, used for authentication and listing. */
export const apiKeysProjection: Projection = {
  name: 'gateway-api-keys',
  eventTypes: ['ApiKeyIssued', 'ApiKeyRevoked'],
  async apply(db: Trx, stored: StoredEvent): Promise<void> {
    const event = { type: stored.type, data: stored.data } as ApiKeyEvent;
    switch (event.type) {
      case 'ApiKeyIssued':
        await db
          .insertInto('gateway_api_keys')
          .values({
            id: event.data.apiKeyId,
            organization_id: event.data.organizationId,
            name: event.data.name,
            user_name: event.data.userName,
            user_id: event.data.userId,
            process_ids: event.data.processIds === null ? null : JSON.stringify(event.data.processIds),
            system: event.data.system,
            key_hash: event.data.keyHash,
            key_prefix: event.data.keyPrefix,
            created_at: event.data.issuedAt,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        return;
      case 'ApiKeyRevoked':
        await db
          .updateTable('gateway_api_keys')
          .set({ revoked_at: event.data.revokedAt })
          .where('id', '=', event.data.apiKeyId)
          .execute();
        return;
      default: {
        const unknownEvent: never = event;
        return unknownEvent;
      }
    }
  },
  async reset(db: Trx): Promise<void> {
    await db.deleteFrom('gateway_api_keys').execute();
  },
};

export const gatewayProjections: Projection[] = [organizationsProjection, apiKeysProjection];
