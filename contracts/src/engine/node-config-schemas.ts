import type { JsonSchema } from '../http/http-route.js';

/**
 * JSON Schemas of the node configs the engine runs (DESIGN.md "Node configs"). The catalog's
 * lint and the engine validate with the same schemas. A value that may be a template is
 * `templatable(...)`: its declared type or a string holding `{{...}}`.
 */
const templatable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'string', pattern: '\\{\\{' }] });

const common = {
  label: { type: 'string', minLength: 1 },
  passthroughFiles: { type: 'boolean' },
};

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

export const nodeConfigSchemas: Record<string, JsonSchema> = {
  inputNode: {
    type: 'object',
    required: ['label', 'triggerType'],
    properties: { ...common, triggerType: { enum: ['gmail', 'outlook', 'webhook', 'schedule', 'manual'] } },
  },
  outputNode: {
    type: 'object',
    required: ['label'],
    properties: { ...common, returnToClient: { type: 'boolean' }, fields: { type: 'object' } },
  },
  scriptNode: {
    type: 'object',
    required: ['label', 'code'],
    properties: {
      ...common,
      code: { type: 'string', minLength: 1 },
      outputs: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 300000 },
      memoryMb: { type: 'integer', minimum: 8, maximum: 1024 },
    },
  },
  conditionalNode: {
    type: 'object',
    required: ['label', 'mode'],
    properties: { ...common, mode: { enum: ['conditions', 'switch'] } },
    oneOf: [
      {
        required: ['conditions'],
        properties: {
          mode: { const: 'conditions' },
          combinator: { enum: ['and', 'or'] },
          conditions: {
            type: 'array',
            minItems: 1,
            items: {
              type: 'object',
              required: ['left', 'operator'],
              properties: {
                operator: {
                  enum: [
                    'eq',
                    'ne',
                    'gt',
                    'gte',
                    'lt',
                    'lte',
                    'contains',
                    'notContains',
                    'startsWith',
                    'endsWith',
                    'in',
                    'exists',
                    'notExists',
                    'isEmpty',
                    'isNotEmpty',
                    'matches',
                  ],
                },
              },
            },
          },
        },
      },
      {
        required: ['value', 'cases'],
        properties: {
          mode: { const: 'switch' },
          cases: {
            type: 'array',
            items: {
              type: 'object',
              required: ['label', 'equals'],
              properties: { label: { type: 'string', minLength: 1, not: { const: 'default' } } },
            },
          },
        },
      },
    ],
  },
  loopNode: {
    type: 'object',
    required: ['label', 'items'],
    properties: {
      ...common,
      items: templatable({ type: 'array' }),
      concurrency: { type: 'integer', minimum: 1, maximum: 100 },
    },
  },
  waitNode: {
    type: 'object',
    required: ['label'],
    properties: {
      ...common,
      seconds: templatable({ type: 'number', minimum: 0 }),
      until: { type: 'string', minLength: 1 },
    },
    oneOf: [{ required: ['seconds'] }, { required: ['until'] }],
  },
  integrationNode: {
    type: 'object',
    required: ['label', 'url'],
    properties: {
      ...common,
      method: { enum: HTTP_METHODS },
      url: { type: 'string', minLength: 1 },
      headers: { type: 'object' },
      query: { type: 'object' },
      bodyType: { enum: ['json', 'form', 'text'] },
      connectionId: { type: 'string', minLength: 1 },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 300000 },
      retries: { type: 'integer', minimum: 0, maximum: 10 },
    },
  },
  sqlNode: {
    type: 'object',
    required: ['label', 'connectionId', 'query'],
    properties: {
      ...common,
      connectionId: { type: 'string', minLength: 1 },
      query: { type: 'string', minLength: 1 },
      params: { type: 'array' },
    },
  },
  databaseNode: {
    type: 'object',
    required: ['label', 'connectionId', 'table', 'operation'],
    properties: {
      ...common,
      connectionId: { type: 'string', minLength: 1 },
      table: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?$' },
      operation: { enum: ['select', 'insert', 'update', 'delete', 'upsert'] },
      values: { type: 'object' },
      where: { type: 'object' },
      conflictColumns: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
      limit: { type: 'integer', minimum: 1 },
    },
    allOf: [
      { if: { properties: { operation: { enum: ['insert', 'update', 'upsert'] } } }, then: { required: ['values'] } },
      { if: { properties: { operation: { const: 'upsert' } } }, then: { required: ['conflictColumns'] } },
      { if: { properties: { operation: { enum: ['update', 'delete'] } } }, then: { required: ['where'] } },
    ],
  },
};
