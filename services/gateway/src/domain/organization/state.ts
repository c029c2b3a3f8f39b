import type { OrganizationEvent } from './events.js';

export interface OrganizationState {
  exists: boolean;
  name?: string;
}

export const initialOrganizationState: OrganizationState = { exists: false };

export function evolveOrganization(state: OrganizationState, event: OrganizationEvent): OrganizationState {
  switch (event.type) {
    case 'OrganizationCreated':
      return { exists: true, name: event.data.name };
    default: {
      const unknownEvent: never = event.type;
      return unknownEvent;
    }
  }
}
