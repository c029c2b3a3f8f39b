import type { ConnectionEvent, ConnectionType, SealedSecret } from './events.js';

export interface ConnectionState {
  status: 'new' | 'active' | 'deleted';
  id: string;
  organizationId: string;
  connectionType: ConnectionType | '';
  name: string;
  sealedData: SealedSecret | null;
  createdBy: string;
  createdById: string;
  createdAt: string;
}

export const initialConnectionState = (): ConnectionState => ({
  status: 'new',
  id: '',
  organizationId: '',
  connectionType: '',
  name: '',
  sealedData: null,
  createdBy: '',
  createdById: '',
  createdAt: '',
});

export function evolveConnection(state: ConnectionState, event: ConnectionEvent): ConnectionState {
  switch (event.type) {
    case 'ConnectionCreated':
      return {
        status: 'active',
        id: event.data.connectionId,
        organizationId: event.data.organizationId,
        connectionType: event.data.connectionType,
        name: event.data.name,
        sealedData: event.data.sealedData,
        createdBy: event.data.createdBy,
        createdById: event.data.createdById,
        createdAt: event.data.at,
      };
    case 'ConnectionDataReplaced':
      return { ...state, sealedData: event.data.sealedData };
    case 'ConnectionDeleted':
      // The ciphertext goes too: a deleted credential is not kept in the state.
      return { ...state, status: 'deleted', sealedData: null };
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}
