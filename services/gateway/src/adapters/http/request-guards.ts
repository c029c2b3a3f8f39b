import type { FastifyRequest } from 'fastify';
import { badRequest, forbidden, notFound, ProblemError, validateAgainst } from '@weft/contracts';
import type { RouteDeclaration } from './route-binding.js';
import type { Actor } from '@weft/bus';
import type { Authenticator } from '../../application/authenticator.js';
import { unstorableText } from './json-body.js';

declare module 'fastify' {
  interface FastifyRequest {
    actor?: Actor;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Path parameters that name a resource by its UUID. */
const ID_PARAM = /(^id$|_id$|Id$|^pid$|^sid$)/;

export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const authorization = request.headers.authorization;
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return match?.[1];
}

export async function authenticate(request: FastifyRequest, authenticator: Authenticator): Promise<Actor> {
  const key = presentedKey(request);
  if (!key) throw new ProblemError(401, 'an API key is required in X-API-Key or Authorization: Bearer');
  const actor = await authenticator.authenticate(key);
  if (!actor) throw new ProblemError(401, 'the API key is not valid');
  return actor;
}

/** Checks that need only the route declaration: who may call it, and which ids it may name. */
export function authorize(route: RouteDeclaration, actor: Actor, params: Record<string, string>): void {
  if (route.systemOnly && !actor.system) throw forbidden('this endpoint requires a system API key');
  for (const [name, value] of Object.entries(params)) {
    // A malformed id names nothing that exists.
    if (ID_PARAM.test(name) && !UUID.test(value)) throw notFound(`no resource with ${name} "${value}"`);
  }
  if (route.orgParam) {
    const organizationId = params[route.orgParam];
    if (!actor.system && organizationId !== actor.organizationId) {
      throw notFound(`organization ${organizationId ?? ''} not found`);
    }
  }
  if (route.unrestrictedOnly && actor.processIds) {
    throw forbidden('this API key is restricted to some processes and cannot manage API keys or connections');
  }
  if (route.createsProcess && actor.processIds && !actor.system) {
    throw forbidden('this API key is restricted to some processes and cannot create new ones');
  }
  if (route.processParam && actor.processIds && !actor.system) {
    const processId = params[route.processParam];
    if (!processId || !actor.processIds.includes(processId)) {
      throw forbidden('this API key is restricted to other processes');
    }
  }
}

export function validateBody(route: RouteDeclaration, body: unknown): void {
  if (!route.bodySchema) return;
  const errors = validateAgainst(route.bodySchema, body ?? {});
  if (errors.length > 0) throw badRequest('the request body is invalid', errors);
}

/** Path parameters and query values reach SQL parameters and events: the same text rule as bodies. */
export function validateUrlText(call: { params: Record<string, string>; query: Record<string, unknown> }): void {
  for (const [part, values] of [
    ['params', call.params],
    ['query', call.query],
  ] as const) {
    const unstorable = unstorableText(values);
    if (unstorable !== undefined) {
      throw badRequest('the request URL contains text that cannot be stored', [
        { path: `/${part}${unstorable.path}`, message: unstorable.message },
      ]);
    }
  }
}
