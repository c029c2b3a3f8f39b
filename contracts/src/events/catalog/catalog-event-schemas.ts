import type { JsonSchema } from '../../http/http-route.js';

/**
 * Stored and published payloads (`data`) of the process catalog's events, schema version 1.
 * Streams: process-<id>, schema-<id>, collection-<id>, connection-<id>. Published on
 * weft.events.<category>.<organizationId>.<key>.<EventType> (see event-subjects.ts); the trigger
 * service reacts to ProcessStarted / ProcessStopped. Every payload carries `at`, the command time.
 */
const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullableStr = { type: ['string', 'null'] } as const;

const position: JsonSchema = {
  type: 'object',
  required: ['x', 'y'],
  properties: { x: { type: 'number' }, y: { type: 'number' } },
};
const node: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'position', 'config'],
  properties: { id: str, type: str, position, config: { type: 'object' } },
};
const edge: JsonSchema = {
  type: 'object',
  required: ['id', 'sourceNodeId', 'targetNodeId', 'sourceHandle', 'targetHandle'],
  properties: { id: str, sourceNodeId: str, targetNodeId: str, sourceHandle: str, targetHandle: str },
};
const graph = { nodes: { type: 'array', items: node }, edges: { type: 'array', items: edge } };
const settings = {
  name: str,
  description: str,
  maxRetries: { type: 'integer', minimum: 0 },
  errorWebhookUrl: nullableStr,
  timeoutSeconds: { type: 'integer', minimum: 0 },
};
const dataBlock: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'jsonSchema'],
  properties: { id: str, name: str, description: str, jsonSchema: { type: ['object', 'boolean'] } },
};
const sealedSecret: JsonSchema = {
  type: 'object',
  required: ['algorithm', 'iv', 'tag', 'ciphertext'],
  // boundTo: the organization and connection ids are the GCM additional data (absent on older secrets).
  properties: {
    algorithm: { const: 'aes-256-gcm' },
    boundTo: { const: 'organization:connection' },
    iv: str,
    tag: str,
    ciphertext: str,
  },
};

const v1 = (required: string[], properties: Record<string, unknown>) => ({
  schemaVersion: 1,
  schema: { type: 'object', required: [...required, 'at'], properties: { ...properties, at: time } } as JsonSchema,
});
const onlyTime = v1([], {});

export const catalogEventSchemas: Record<string, { schemaVersion: number; schema: JsonSchema }> = {
  ProcessCreated: v1(
    [
      'processId',
      'organizationId',
      'name',
      'description',
      'maxRetries',
      'errorWebhookUrl',
      'timeoutSeconds',
      'nodes',
      'edges',
      'createdBy',
      'createdById',
    ],
    {
      processId: str,
      organizationId: str,
      ...settings,
      ...graph,
      createdBy: str,
      createdById: str,
      origin: {
        type: 'object',
        required: ['kind'],
        properties: { kind: { enum: ['import', 'fork'] }, sourceProcessId: str },
      },
    },
  ),
  ProcessSettingsChanged: v1(['changes'], {
    changes: { type: 'object', properties: settings, additionalProperties: false },
  }),
  ProcessDeleted: onlyTime,
  NodeAdded: v1(['node'], { node }),
  NodeUpdated: v1(['node', 'rewrittenConfigs'], {
    node,
    rewrittenConfigs: {
      type: 'array',
      items: {
        type: 'object',
        required: ['nodeId', 'config'],
        properties: { nodeId: str, config: { type: 'object' } },
      },
    },
  }),
  NodeDeleted: v1(['nodeId', 'removedEdgeIds'], { nodeId: str, removedEdgeIds: { type: 'array', items: str } }),
  EdgeAdded: v1(['edge'], { edge }),
  EdgeDeleted: v1(['edgeId'], { edgeId: str }),
  GraphReplaced: v1(['nodes', 'edges'], graph),
  ProcessLocked: onlyTime,
  ProcessUnlocked: onlyTime,
  ProcessStarted: onlyTime,
  ProcessStopped: onlyTime,
  VersionCreated: v1(['versionId', 'versionNumber', 'label', 'snapshot', 'createdBy', 'createdById'], {
    versionId: str,
    versionNumber: { type: 'integer', minimum: 1 },
    label: str,
    snapshot: { type: 'object', required: ['nodes', 'edges'], properties: graph },
    createdBy: str,
    createdById: str,
  }),
  VersionDeleted: v1(['versionId'], { versionId: str }),
  VersionRestored: v1(['versionId', 'versionNumber', 'nodes', 'edges'], {
    versionId: str,
    versionNumber: { type: 'integer', minimum: 1 },
    ...graph,
  }),
  SchemaCreated: v1(['schemaId', 'organizationId', 'name', 'description', 'dataBlocks', 'createdBy', 'createdById'], {
    schemaId: str,
    organizationId: str,
    name: str,
    description: str,
    dataBlocks: { type: 'array', items: dataBlock },
    createdBy: str,
    createdById: str,
    importedFrom: str,
  }),
  SchemaChanged: v1(['changes'], {
    changes: {
      type: 'object',
      properties: { name: str, description: str, dataBlocks: { type: 'array', items: dataBlock } },
      additionalProperties: false,
    },
  }),
  SchemaDeleted: onlyTime,
  CollectionCreated: v1(
    ['collectionId', 'kind', 'organizationId', 'name', 'description', 'parentCollectionId', 'createdBy', 'createdById'],
    {
      collectionId: str,
      kind: { enum: ['process', 'schema'] },
      organizationId: str,
      name: str,
      description: str,
      parentCollectionId: nullableStr,
      createdBy: str,
      createdById: str,
    },
  ),
  CollectionChanged: v1(['changes'], {
    changes: {
      type: 'object',
      properties: { name: str, description: str, parentCollectionId: nullableStr },
      additionalProperties: false,
    },
  }),
  CollectionViewed: onlyTime,
  CollectionDeleted: onlyTime,
  CollectionMemberAdded: v1(['memberId'], { memberId: str }),
  CollectionMemberRemoved: v1(['memberId'], { memberId: str }),
  /** The secret data is only ever stored sealed (AES-256-GCM); clear text never enters an event. */
  ConnectionCreated: v1(
    ['connectionId', 'organizationId', 'connectionType', 'name', 'sealedData', 'createdBy', 'createdById'],
    {
      connectionId: str,
      organizationId: str,
      connectionType: {
        enum: ['gmail-oauth', 'outlook-oauth', 'google-service-account', 'postgres', 'mysql', 'http', 'smtp', 'llm'],
      },
      name: str,
      sealedData: sealedSecret,
      createdBy: str,
      createdById: str,
    },
  ),
  /** A refreshed secret (OAuth token) from the trigger service, sealed like at creation. */
  ConnectionDataReplaced: v1(['sealedData'], { sealedData: sealedSecret }),
  ConnectionDeleted: onlyTime,
};
