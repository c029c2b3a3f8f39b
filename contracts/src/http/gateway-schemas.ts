import type { JsonSchema } from './http-route.js';

/** Request bodies of the gateway's own endpoints (organizations and API keys). */
const uuid = { type: 'string', format: 'uuid' } as const;
const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength }) as const;

export const createOrganizationBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: text(200) },
};

export const createApiKeyBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'userName', 'userId'],
  properties: {
    name: text(200),
    userName: text(200),
    userId: uuid,
    // An empty list would read as "no restriction": at least one id, or leave it out.
    processIds: { type: 'array', items: uuid, minItems: 1, maxItems: 1000, uniqueItems: true },
    system: { type: 'boolean' },
  },
};

export interface CreateOrganizationBody {
  name: string;
}

export interface CreateApiKeyBody {
  name: string;
  userName: string;
  userId: string;
  processIds?: string[];
  system?: boolean;
}

export interface OrganizationView {
  id: string;
  name: string;
  createdBy: string;
  createdById: string;
  createdAt: string;
}

export interface ApiKeyView {
  id: string;
  organizationId: string;
  name: string;
  userName: string;
  userId: string;
  processIds: string[] | null;
  system: boolean;
  /** First characters of the key, to tell keys apart; the key itself is shown once, at creation. */
  keyPrefix: string;
  createdAt: string;
}

export interface IssuedApiKeyView extends ApiKeyView {
  /** The key. Returned only in the answer to its creation. */
  key: string;
}
