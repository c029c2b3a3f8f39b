import type { JsonSchema } from '../../http/http-route.js';

/** Stored and published event payloads of the gateway's aggregates, schema version 1. */
const uuid = { type: 'string', format: 'uuid' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const str = { type: 'string' } as const;

export const gatewayEventSchemas: Record<string, { schemaVersion: number; schema: JsonSchema }> = {
  OrganizationCreated: {
    schemaVersion: 1,
    schema: {
      type: 'object',
      required: ['organizationId', 'name', 'createdAt', 'createdBy', 'createdById'],
      properties: { organizationId: uuid, name: str, createdAt: time, createdBy: str, createdById: str },
    },
  },
  ApiKeyIssued: {
    schemaVersion: 1,
    schema: {
      type: 'object',
      required: ['apiKeyId', 'organizationId', 'name', 'userName', 'userId', 'processIds', 'system', 'keyHash'],
      properties: {
        apiKeyId: uuid,
        organizationId: uuid,
        name: str,
        userName: str,
        userId: str,
        processIds: { anyOf: [{ type: 'null' }, { type: 'array', items: uuid }] },
        system: { type: 'boolean' },
        keyHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        keyPrefix: str,
        issuedAt: time,
        issuedBy: str,
        issuedById: str,
      },
    },
  },
  ApiKeyRevoked: {
    schemaVersion: 1,
    schema: {
      type: 'object',
      required: ['apiKeyId', 'organizationId', 'revokedAt'],
      properties: { apiKeyId: uuid, organizationId: uuid, revokedAt: time, revokedBy: str, revokedById: str },
    },
  },
};
