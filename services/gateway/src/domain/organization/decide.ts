import { conflict } from '@weft/contracts';
import type { OrganizationEvent } from './events.js';
import type { OrganizationState } from './state.js';

export interface CreateOrganization {
  type: 'CreateOrganization';
  data: { organizationId: string; name: string };
  metadata: { now: string; actorName: string; actorId: string };
}

export type OrganizationCommand = CreateOrganization;

export function decideOrganization(command: OrganizationCommand, state: OrganizationState): OrganizationEvent[] {
  switch (command.type) {
    case 'CreateOrganization':
      if (state.exists) throw conflict(`organization ${command.data.organizationId} already exists`);
      return [
        {
          type: 'OrganizationCreated',
          data: {
            organizationId: command.data.organizationId,
            name: command.data.name,
            createdAt: command.metadata.now,
            createdBy: command.metadata.actorName,
            createdById: command.metadata.actorId,
          },
        },
      ];
    default: {
      const unknownCommand: never = command.type;
      return unknownCommand;
    }
  }
}
