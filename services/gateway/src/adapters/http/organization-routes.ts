import {
  createApiKeyBody,
  createOrganizationBody,
  notFound,
  parsePaging,
  type CreateApiKeyBody,
  type CreateOrganizationBody,
} from '@weft/contracts';
import type { EventStore } from '@weft/event-store';
import type { ApiKeyCommands } from '../../application/api-key-commands.js';
import type { Authenticator } from '../../application/authenticator.js';
import type { GatewayReadModels } from '../../application/gateway-read-models.js';
import { createOrganization } from '../../application/organization-commands.js';
import type { RouteBinding } from './route-binding.js';

export interface OrganizationRouteDeps {
  store: EventStore;
  readModels: GatewayReadModels;
  keys: ApiKeyCommands;
  authenticator: Authenticator;
}

/** The gateway's own resources: organizations and API keys (DESIGN.md, "Authentication"). */
export function organizationRoutes(deps: OrganizationRouteDeps): RouteBinding[] {
  return [
    {
      route: {
        method: 'POST',
        path: '/api/v1/organizations',
        summary: 'Create an organization (system key)',
        tag: 'organizations',
        bodySchema: createOrganizationBody,
        systemOnly: true,
        successStatus: 201,
      },
      async handle(call, actor) {
        const body = call.body as CreateOrganizationBody;
        return { status: 201, body: await createOrganization(deps.store, body.name, actor) };
      },
    },
    {
      route: {
        method: 'GET',
        path: '/api/v1/organizations/:org_id',
        summary: 'Read an organization',
        tag: 'organizations',
        orgParam: 'org_id',
      },
      async handle(call) {
        const organization = await deps.readModels.organization(call.params.org_id ?? '');
        if (!organization) throw notFound(`organization ${call.params.org_id ?? ''} not found`);
        return { status: 200, body: organization };
      },
    },
    {
      route: {
        method: 'POST',
        path: '/api/v1/api-keys/by-org/:org_id',
        summary: 'Issue an API key; the key is in this answer only',
        unrestrictedOnly: true,
        tag: 'api-keys',
        bodySchema: createApiKeyBody,
        orgParam: 'org_id',
        successStatus: 201,
      },
      async handle(call, actor) {
        const issued = await deps.keys.issue(call.params.org_id ?? '', call.body as CreateApiKeyBody, actor);
        return { status: 201, body: issued, headers: { 'cache-control': 'no-store' } };
      },
    },
    {
      route: {
        method: 'GET',
        path: '/api/v1/api-keys/by-org/:org_id',
        summary: "List an organization's active API keys (without the keys)",
        unrestrictedOnly: true,
        tag: 'api-keys',
        orgParam: 'org_id',
      },
      async handle(call) {
        const organizationId = call.params.org_id ?? '';
        const { page, pageSize } = parsePaging(call.query);
        if (!(await deps.readModels.organization(organizationId))) {
          throw notFound(`organization ${organizationId} not found`);
        }
        return { status: 200, body: await deps.readModels.activeApiKeys(organizationId, page, pageSize) };
      },
    },
    {
      route: {
        method: 'DELETE',
        path: '/api/v1/api-keys/by-id/:id',
        summary: 'Revoke an API key',
        unrestrictedOnly: true,
        tag: 'api-keys',
        successStatus: 204,
      },
      async handle(call, actor) {
        await deps.keys.revoke(call.params.id ?? '', actor);
        deps.authenticator.forget();
        return { status: 204 };
      },
    },
  ];
}
