import type { ApiKeyEvent } from './events.js';

export interface ApiKeyState {
  status: 'absent' | 'active' | 'revoked';
  organizationId?: string;
}

export const initialApiKeyState: ApiKeyState = { status: 'absent' };

export function evolveApiKey(state: ApiKeyState, event: ApiKeyEvent): ApiKeyState {
  switch (event.type) {
    case 'ApiKeyIssued':
      return { status: 'active', organizationId: event.data.organizationId };
    case 'ApiKeyRevoked':
      return { ...state, status: 'revoked' };
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}
