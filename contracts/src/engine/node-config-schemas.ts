import type { JsonSchema } from '../http/http-route.js';
import { WEB_AUTOMATION_ACTIONS } from './node-configs.js';

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

/** A FileReference (node-configs.ts): what nodes pass files as. */
const fileReference: JsonSchema = {
  type: 'object',
  required: ['name', 'url'],
  properties: { name: { type: 'string' }, url: { type: 'string', minLength: 1 }, size: { type: 'number' } },
};

const addressList: JsonSchema = {
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
  ],
};

/** A web automation step whose action is one of `actions` needs the `fields`. */
const stepNeeds = (actions: string[], fields: string[]): JsonSchema => ({
  if: { required: ['action'], properties: { action: { enum: actions } } },
  then: { required: fields },
});

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
    required: ['label'],
    properties: {
      ...common,
      kind: { enum: ['http', 'email', 'webhook'] },
      method: { enum: HTTP_METHODS },
      url: { type: 'string', minLength: 1 },
      headers: { type: 'object' },
      query: { type: 'object' },
      bodyType: { enum: ['json', 'form', 'text'] },
      connectionId: { type: 'string', minLength: 1 },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 300000 },
      retries: { type: 'integer', minimum: 0, maximum: 10 },
      to: templatable(addressList),
      cc: templatable(addressList),
      subject: { type: 'string' },
      text: { type: 'string' },
      html: { type: 'string' },
      attachments: templatable({ type: 'array', items: templatable(fileReference) }),
      secret: { type: 'string', minLength: 1 },
    },
    allOf: [
      {
        if: { required: ['kind'], properties: { kind: { const: 'email' } } },
        then: { required: ['connectionId', 'to', 'subject'] },
      },
      {
        if: { required: ['kind'], properties: { kind: { const: 'webhook' } } },
        then: { required: ['url'], anyOf: [{ required: ['connectionId'] }, { required: ['secret'] }] },
      },
      { if: { not: { required: ['kind'] } }, then: { required: ['url'] } },
      { if: { required: ['kind'], properties: { kind: { const: 'http' } } }, then: { required: ['url'] } },
    ],
  },
  ocrNode: {
    type: 'object',
    required: ['label', 'file'],
    properties: {
      ...common,
      file: templatable(fileReference),
      languages: {
        type: 'array',
        minItems: 1,
        uniqueItems: true,
        items: { type: 'string', pattern: '^[a-z][a-z_]{1,15}$' },
      },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 600000 },
    },
  },
  webAutomationNode: {
    type: 'object',
    required: ['label', 'steps'],
    properties: {
      ...common,
      allowedHosts: { type: 'array', items: { type: 'string', minLength: 1, pattern: '^[^/:\\s]+$' } },
      steps: {
        type: 'array',
        minItems: 1,
        maxItems: 200,
        items: {
          type: 'object',
          required: ['action'],
          properties: {
            action: { enum: [...WEB_AUTOMATION_ACTIONS] },
            url: { type: 'string', minLength: 1 },
            selector: { type: 'string', minLength: 1 },
            value: { type: 'string' },
            attribute: { type: 'string', minLength: 1 },
            name: { type: 'string', minLength: 1, maxLength: 200 },
            timeoutMs: { type: 'integer', minimum: 1, maximum: 300000 },
          },
          allOf: [
            stepNeeds(['goto'], ['url']),
            stepNeeds(['click', 'fill', 'select', 'waitFor', 'extractText', 'extractAttribute'], ['selector']),
            stepNeeds(['fill', 'select'], ['value']),
            stepNeeds(['extractText', 'extractAttribute'], ['name']),
            stepNeeds(['extractAttribute'], ['attribute']),
          ],
        },
      },
    },
  },
  schematizationNode: {
    type: 'object',
    required: ['label', 'schemaId', 'selectedDataBlocks', 'mode'],
    properties: {
      ...common,
      schemaId: { type: 'string', minLength: 1 },
      selectedDataBlocks: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', minLength: 1 } },
      mode: { enum: ['mapping', 'llm'] },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 600000 },
    },
    oneOf: [
      {
        required: ['mappings'],
        properties: {
          mode: { const: 'mapping' },
          mappings: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
        },
      },
      {
        required: ['connectionId', 'source'],
        properties: {
          mode: { const: 'llm' },
          connectionId: { type: 'string', minLength: 1 },
          instructions: { type: 'string' },
          maxRepairs: { type: 'integer', minimum: 0, maximum: 10 },
          model: { type: 'string', minLength: 1 },
        },
      },
    ],
  },
  mlModelNode: {
    type: 'object',
    required: ['label', 'provider'],
    properties: {
      ...common,
      provider: { enum: ['openai', 'onnx'] },
      timeoutMs: { type: 'integer', minimum: 1, maximum: 600000 },
    },
    allOf: [
      {
        if: { required: ['provider'], properties: { provider: { const: 'openai' } } },
        then: {
          required: ['connectionId', 'operation'],
          properties: {
            connectionId: { type: 'string', minLength: 1 },
            model: { type: 'string', minLength: 1 },
            operation: { enum: ['chat', 'embeddings'] },
            messages: templatable({
              type: 'array',
              minItems: 1,
              items: {
                type: 'object',
                required: ['role', 'content'],
                properties: { role: { enum: ['system', 'user', 'assistant'] } },
              },
            }),
            responseSchema: { type: 'object' },
            input: templatable({
              anyOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { type: 'string' } }],
            }),
          },
          allOf: [
            { if: { properties: { operation: { const: 'chat' } } }, then: { required: ['messages'] } },
            { if: { properties: { operation: { const: 'embeddings' } } }, then: { required: ['input'] } },
          ],
        },
      },
      {
        if: { required: ['provider'], properties: { provider: { const: 'onnx' } } },
        then: {
          required: ['model', 'inputs'],
          properties: {
            model: { anyOf: [{ type: 'string', minLength: 1 }, fileReference] },
            connectionId: { type: 'string', minLength: 1 },
            inputs: {
              type: 'object',
              minProperties: 1,
              additionalProperties: {
                type: 'object',
                required: ['data', 'dims'],
                properties: {
                  dims: templatable({ type: 'array', items: { type: 'integer', minimum: 0 } }),
                  type: { enum: ['float32', 'float64', 'int32', 'int64', 'bool', 'string'] },
                },
              },
            },
          },
        },
      },
    ],
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
