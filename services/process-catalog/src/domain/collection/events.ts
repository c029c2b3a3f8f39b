/** Process collections and schema collections are separate sets of the same aggregate. */
export type CollectionKind = 'process' | 'schema';

export interface CollectionFields {
  name: string;
  description: string;
  parentCollectionId: string | null;
}

/** Events of a collection stream (`collection-<id>`). */
export type CollectionEvent =
  | {
      type: 'CollectionCreated';
      data: CollectionFields & {
        collectionId: string;
        kind: CollectionKind;
        organizationId: string;
        createdBy: string;
        createdById: string;
        at: string;
      };
    }
  | { type: 'CollectionChanged'; data: { changes: Partial<CollectionFields>; at: string } }
  | { type: 'CollectionViewed'; data: { at: string } }
  | { type: 'CollectionDeleted'; data: { at: string } }
  | { type: 'CollectionMemberAdded'; data: { memberId: string; at: string } }
  | { type: 'CollectionMemberRemoved'; data: { memberId: string; at: string } };

export const COLLECTION_EVENT_TYPES: readonly CollectionEvent['type'][] = [
  'CollectionCreated',
  'CollectionChanged',
  'CollectionViewed',
  'CollectionDeleted',
  'CollectionMemberAdded',
  'CollectionMemberRemoved',
];

export const collectionStreamId = (collectionId: string): string => `collection-${collectionId}`;
