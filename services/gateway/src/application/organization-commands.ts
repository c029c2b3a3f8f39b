import { randomUUID } from 'node:crypto';
import type { OrganizationView } from '@weft/contracts';
import type { Actor } from '@weft/bus';
import type { EventStore } from '@weft/event-store';
import { decideOrganization, type OrganizationCommand } from '../domain/organization/decide.js';
import { organizationStream, type OrganizationEvent } from '../domain/organization/events.js';
import { evolveOrganization, initialOrganizationState, type OrganizationState } from '../domain/organization/state.js';
import { runAggregateCommand, type Aggregate } from './aggregate-command.js';

const organizationAggregate: Aggregate<OrganizationState, OrganizationEvent, OrganizationCommand> = {
  initial: initialOrganizationState,
  evolve: evolveOrganization,
  decide: decideOrganization,
};

export async function createOrganization(
  store: EventStore,
  name: string,
  actor: Actor,
  options: { organizationId?: string; traceId?: string } = {},
): Promise<OrganizationView> {
  const organizationId = options.organizationId ?? randomUUID();
  const now = new Date().toISOString();
  await runAggregateCommand(
    store,
    organizationStream(organizationId),
    organizationAggregate,
    {
      type: 'CreateOrganization',
      data: { organizationId, name },
      metadata: { now, actorName: actor.userName, actorId: actor.userId },
    },
    { actorId: actor.userId, actorName: actor.userName, organizationId, traceId: options.traceId },
  );
  return { id: organizationId, name, createdBy: actor.userName, createdById: actor.userId, createdAt: now };
}
