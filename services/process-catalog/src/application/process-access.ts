import { forbidden, notFound } from '@weft/contracts';
import type { Caller } from './caller.js';

/**
 * Another organization's process is answered as unknown (404), so ids never leak across
 * organizations; a key restricted to process ids gets 403 for the others.
 */
export function assertProcessAccess(
  process: { id: string; organizationId: string } | undefined,
  caller: Caller,
): asserts process is { id: string; organizationId: string } {
  if (!process) throw notFound('process not found');
  const { actor } = caller;
  if (!actor.system && actor.organizationId !== process.organizationId) throw notFound('process not found');
  if (actor.processIds && !actor.processIds.includes(process.id)) {
    throw forbidden('this API key may not access this process');
  }
}

/** Lists and creates within an organization: only its own keys (or system keys). */
export function assertOrganizationAccess(organizationId: string, caller: Caller): void {
  if (!caller.actor.system && caller.actor.organizationId !== organizationId) throw notFound('organization not found');
}

/** Organization-wide resources (connections) are managed only by keys not restricted to process ids. */
export function assertUnrestricted(caller: Caller): void {
  if (caller.actor.processIds)
    throw forbidden('this API key is restricted to some processes and cannot manage connections');
}
