import { badRequest, conflict, notFound } from '@weft/contracts';
import type { Command } from '../shared/command-metadata.js';
import type { CollectionEvent, CollectionFields, CollectionKind } from './events.js';
import type { CollectionState } from './state.js';

/**
 * Facts about other collections (does the parent exist, what are its ancestors) are looked up by
 * the application and passed in, so the decider can refuse cycles while staying pure.
 */
export type CollectionCommand =
  | Command<
      'CreateCollection',
      CollectionFields & { collectionId: string; kind: CollectionKind; organizationId: string }
    >
  | Command<'ChangeCollection', { changes: Partial<CollectionFields>; ancestorsOfNewParent: string[] }>
  | Command<'ViewCollection', Record<string, never>>
  | Command<'DeleteCollection', Record<string, never>>
  | Command<'AddCollectionMember', { memberId: string }>
  | Command<'RemoveCollectionMember', { memberId: string }>;

const requireActive = (state: CollectionState): void => {
  if (state.status !== 'active') throw notFound('collection not found');
};

export function decideCollection(command: CollectionCommand, state: CollectionState): CollectionEvent[] {
  const at = command.metadata.now;
  switch (command.type) {
    case 'CreateCollection': {
      if (state.status !== 'new') throw conflict(`collection ${command.data.collectionId} exists already`);
      if (command.data.name.trim().length === 0) {
        throw badRequest('invalid collection', [{ path: '/name', message: 'must be a non-empty string' }]);
      }
      return [
        {
          type: 'CollectionCreated',
          data: { ...command.data, createdBy: command.metadata.actorName, createdById: command.metadata.actorId, at },
        },
      ];
    }
    case 'ChangeCollection': {
      requireActive(state);
      const { changes, ancestorsOfNewParent } = command.data;
      if (changes.name !== undefined && changes.name.trim().length === 0) {
        throw badRequest('invalid collection', [{ path: '/name', message: 'must be a non-empty string' }]);
      }
      const parent = changes.parentCollectionId;
      if (parent && (parent === state.id || ancestorsOfNewParent.includes(state.id))) {
        throw badRequest('a collection cannot become its own ancestor', [
          { path: '/parentCollectionId', message: 'is this collection or one of its descendants' },
        ]);
      }
      const effective = Object.fromEntries(
        Object.entries(changes).filter(
          ([key, value]) => value !== undefined && value !== state[key as keyof CollectionFields],
        ),
      );
      return Object.keys(effective).length === 0
        ? []
        : [{ type: 'CollectionChanged', data: { changes: effective, at } }];
    }
    case 'ViewCollection':
      requireActive(state);
      return [{ type: 'CollectionViewed', data: { at } }];
    case 'DeleteCollection':
      requireActive(state);
      return [{ type: 'CollectionDeleted', data: { at } }];
    case 'AddCollectionMember':
      requireActive(state);
      // Membership is idempotent: adding twice changes nothing.
      return state.members.includes(command.data.memberId)
        ? []
        : [{ type: 'CollectionMemberAdded', data: { memberId: command.data.memberId, at } }];
    case 'RemoveCollectionMember':
      requireActive(state);
      return state.members.includes(command.data.memberId)
        ? [{ type: 'CollectionMemberRemoved', data: { memberId: command.data.memberId, at } }]
        : [];
    default: {
      const unknownCommand: never = command;
      return unknownCommand;
    }
  }
}
