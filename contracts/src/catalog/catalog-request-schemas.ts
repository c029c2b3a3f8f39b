import type { JsonSchema } from '../http/http-route.js';

/** Request bodies of the catalog's HTTP endpoints (JSON Schema draft-07, closed where the contract is). */
const position: JsonSchema = {
  type: 'object',
  properties: { x: { type: 'number' }, y: { type: 'number' } },
  required: ['x', 'y'],
  additionalProperties: false,
};

/** Only the fields every node type shares; the rest of a config is type-specific (lint checks it). */
const nodeConfigShape: JsonSchema = {
  type: 'object',
  properties: { label: { type: 'string' } },
};

/** A node as a client sends it; `id` is kept when it is an unused UUID, otherwise replaced. */
export const nodeInputSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { type: 'string', minLength: 1, maxLength: 100 },
    position,
    config: nodeConfigShape,
  },
  required: ['type'],
  additionalProperties: false,
};

/** An edge in the process form (snake_case); handles default to `output` / `input`. */
export const edgeInputSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    source_node_id: { type: 'string', minLength: 1 },
    target_node_id: { type: 'string', minLength: 1 },
    source_handle: { type: 'string', minLength: 1 },
    target_handle: { type: 'string', minLength: 1 },
  },
  required: ['source_node_id', 'target_node_id'],
  additionalProperties: false,
};

/**
 * The longest time-out a process may have: a year (366 days). The engine's timers step past
 * Node's 2^31-1 ms limit and long waits are parked, so the time-out is not bound by a timer.
 */
export const MAX_PROCESS_TIMEOUT_SECONDS = 31_622_400;

/** error_webhook_url must be http(s); the catalog also checks that it parses as a URL. */
export const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$';

const settingsProperties = {
  name: { type: 'string', minLength: 1, maxLength: 500 },
  description: { type: 'string', maxLength: 10000 },
  max_retries: { type: 'integer', minimum: 0, maximum: 100 },
  error_webhook_url: { type: ['string', 'null'], maxLength: 2000, pattern: HTTP_URL_PATTERN },
  timeout_seconds: { type: 'integer', minimum: 0, maximum: MAX_PROCESS_TIMEOUT_SECONDS },
};

export const createProcessBodySchema: JsonSchema = {
  type: 'object',
  properties: {
    ...settingsProperties,
    nodes: { type: 'array', items: nodeInputSchema, maxItems: 5000 },
    edges: { type: 'array', items: edgeInputSchema, maxItems: 20000 },
  },
  required: ['name'],
  additionalProperties: false,
};

export const updateProcessBodySchema: JsonSchema = {
  type: 'object',
  properties: createProcessBodySchema.properties,
  additionalProperties: false,
};

export const updateNodeBodySchema: JsonSchema = {
  type: 'object',
  properties: { type: { type: 'string', minLength: 1, maxLength: 100 }, position, config: nodeConfigShape },
  minProperties: 1,
  additionalProperties: false,
};

export const replaceGraphBodySchema: JsonSchema = {
  type: 'object',
  properties: {
    nodes: { type: 'array', items: nodeInputSchema, maxItems: 5000 },
    edges: { type: 'array', items: edgeInputSchema, maxItems: 20000 },
  },
  required: ['nodes', 'edges'],
  additionalProperties: false,
};

export const createVersionBodySchema: JsonSchema = {
  type: 'object',
  properties: { label: { type: 'string', maxLength: 500 } },
  required: ['label'],
  additionalProperties: false,
};

export const createConnectionBodySchema: JsonSchema = {
  type: 'object',
  properties: {
    type: {
      enum: ['gmail-oauth', 'outlook-oauth', 'google-service-account', 'postgres', 'mysql', 'http', 'smtp', 'llm'],
    },
    name: { type: 'string', minLength: 1, maxLength: 500 },
    data: { type: 'object' },
  },
  required: ['type', 'name', 'data'],
  additionalProperties: false,
};

/** A data block: a named JSON Schema (it must compile, checked by the catalog). */
export const dataBlockInputSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 10000 },
    jsonSchema: { type: ['object', 'boolean'] },
  },
  required: ['name', 'jsonSchema'],
  additionalProperties: false,
};

const schemaProperties = {
  name: { type: 'string', minLength: 1, maxLength: 500 },
  description: { type: 'string', maxLength: 10000 },
  dataBlocks: { type: 'array', items: dataBlockInputSchema, maxItems: 500 },
};

export const createSchemaBodySchema: JsonSchema = {
  type: 'object',
  properties: schemaProperties,
  required: ['name'],
  additionalProperties: false,
};

export const updateSchemaBodySchema: JsonSchema = {
  type: 'object',
  properties: schemaProperties,
  additionalProperties: false,
};

const uuid = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
};

export const createCollectionBodySchema: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 500 },
    description: { type: 'string', maxLength: 10000 },
    parentCollectionId: { ...uuid, type: ['string', 'null'] },
  },
  required: ['name'],
  additionalProperties: false,
};

/** The spec's PUT takes name and description; parentCollectionId moves the collection (null: to the top). */
export const updateCollectionBodySchema: JsonSchema = {
  type: 'object',
  properties: createCollectionBodySchema.properties,
  additionalProperties: false,
};
