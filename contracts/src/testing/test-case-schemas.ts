import type { JsonSchema } from '../http/http-route.js';

/** Limits of a test case's lists and texts (the body limit caps inputData). */
const MAX_TAGS = 50;
const MAX_IGNORE_FIELDS = 200;
const MAX_EXPECTED_FILES = 200;

export const expectedFilesSchema: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    count: { type: 'integer', minimum: 0, maximum: 1_000_000 },
    files: {
      type: 'array',
      maxItems: MAX_EXPECTED_FILES,
      items: {
        type: 'object',
        properties: {
          namePattern: { type: 'string', minLength: 1, maxLength: 500 },
          minSize: { type: 'integer', minimum: 0 },
        },
        required: ['namePattern'],
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};

const testCaseProperties: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 500 },
  description: { type: 'string', maxLength: 10_000 },
  inputNodeId: { type: 'string', minLength: 1, maxLength: 200 },
  inputData: {},
  expectedOutputSchema: { type: ['object', 'boolean'] },
  expectedFiles: expectedFilesSchema,
  ignoreFields: {
    type: 'array',
    maxItems: MAX_IGNORE_FIELDS,
    items: { type: 'string', minLength: 1, maxLength: 1000, pattern: '^\\$' },
  },
  tags: { type: 'array', maxItems: MAX_TAGS, items: { type: 'string', minLength: 1, maxLength: 100 } },
  disabled: { type: 'boolean' },
};

/** Body of POST /test-cases/by-process/:process_id and PUT /test-cases/by-id/:id (a full replacement). */
export const testCaseBodySchema: JsonSchema = {
  type: 'object',
  properties: testCaseProperties,
  required: ['name', 'inputNodeId'],
  additionalProperties: false,
};

/** A test case inside an export or import document. */
export const exportedTestCaseSchema: JsonSchema = testCaseBodySchema;

/** Body of POST /test-runs/batch. */
export const testBatchBodySchema: JsonSchema = {
  type: 'object',
  properties: {
    processId: { type: 'string', format: 'uuid' },
    testCaseIds: { type: 'array', maxItems: 10_000, items: { type: 'string', format: 'uuid' } },
    tags: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 100 } },
  },
  required: ['processId'],
  additionalProperties: false,
};
