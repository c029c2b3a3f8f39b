import type { CollectionEvent, CollectionFields, CollectionKind } from './events.js';

export interface CollectionState extends CollectionFields {
  status: 'new' | 'active' | 'deleted';
  id: string;
  kind: CollectionKind;
  organizationId: string;
  /** Process ids (or schema ids), in the order they were added. */
  members: string[];
  createdBy: string;
  createdById: string;
  createdAt: string;
  updatedAt: string;
  viewedAt: string | null;
}

export const initialCollectionState = (): CollectionState => ({
  status: 'new',
  id: '',
  kind: 'process',
  organizationId: '',
  name: '',
  description: '',
  parentCollectionId: null,
  members: [],
  createdBy: '',
  createdById: '',
  createdAt: '',
  updatedAt: '',
  viewedAt: null,
});

export function evolveCollection(state: CollectionState, event: CollectionEvent): CollectionState {
  switch (event.type) {
    case 'CollectionCreated': {
      const { collectionId, at, ...rest } = event.data;
      return { ...state, ...rest, status: 'active', id: collectionId, createdAt: at, updatedAt: at };
    }
    case 'CollectionChanged':
      return { ...state, ...event.data.changes, updatedAt: event.data.at };
    case 'CollectionViewed':
      return { ...state, viewedAt: event.data.at };
    case 'CollectionDeleted':
      return { ...state, status: 'deleted', members: [], updatedAt: event.data.at };
    case 'CollectionMemberAdded':
      return { ...state, members: [...state.members, event.data.memberId], updatedAt: event.data.at };
    case 'CollectionMemberRemoved':
      return { ...state, members: state.members.filter((id) => id !== event.data.memberId), updatedAt: event.data.at };
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}
