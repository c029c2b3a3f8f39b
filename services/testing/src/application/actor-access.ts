import { forbidden, notFound, ProblemError } from '@weft/contracts';
import type { Actor, MessageContext } from '@weft/bus';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const requireActor = (context: MessageContext): Actor => {
  if (!context.actor) throw new ProblemError(401, 'no authenticated actor');
  return context.actor;
};

/** A resource of another organization is unknown to the key (404); outside a restricted key's processes, 403. */
export function assertVisible(
  actor: Actor,
  resource: { organizationId: string; processId: string },
  what: string,
): void {
  if (!actor.system && resource.organizationId !== actor.organizationId) throw notFound(`${what} not found`);
  if (actor.processIds && !actor.processIds.includes(resource.processId)) {
    throw forbidden(`this API key may not use process ${resource.processId}`);
  }
}

export const single = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

export const many = (value: string | string[] | undefined): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value])
    .flatMap((item) => item.split(','))
    .filter(Boolean);
