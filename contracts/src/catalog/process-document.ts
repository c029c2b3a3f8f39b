import type { JsonSchema } from '../http/http-route.js';
import type { ExportedTestCase } from '../testing/test-case.js';
import { exportedTestCaseSchema } from '../testing/test-case-schemas.js';
import { HTTP_URL_PATTERN, MAX_PROCESS_TIMEOUT_SECONDS } from './catalog-request-schemas.js';

/**
 * The export / import document (camelCase, spec "Process import document"). An export is
 * accepted by bulk-import unchanged. Node ids are keys inside the document only: an import
 * always gives nodes and edges new ids. Edges name nodes by those keys (or, for nodes without
 * an id, by their index as a string).
 */
export interface ProcessDocumentNode {
  id?: string;
  type: string;
  position?: { x: number; y: number };
  config?: Record<string, unknown>;
}

export interface ProcessDocumentEdge {
  id?: string;
  sourceNodeId: string;
  targetNodeId: string;
  sourceHandle?: string;
  targetHandle?: string;
}

export interface SchemaDependency {
  id?: string;
  name: string;
  description?: string;
  dataBlocks?: { id?: string; name: string; description?: string; jsonSchema: Record<string, unknown> | boolean }[];
}

export interface ProcessDocument {
  formatVersion?: 1;
  name: string;
  description?: string;
  maxRetries?: number;
  errorWebhookUrl?: string | null;
  timeoutSeconds?: number;
  nodes: ProcessDocumentNode[];
  edges: ProcessDocumentEdge[];
  /** Every schema a node references, inline, keyed by schema id. */
  schemaDependencies?: Record<string, SchemaDependency>;
  /** The process's test cases (docs/testing.md); `inputNodeId` names a node by its key in this document. */
  testCases?: ExportedTestCase[];
  /** Where an export came from; informational. */
  exportedFrom?: { processId: string; organizationId: string; revision: number; exportedAt: string };
}

export const PROCESS_DOCUMENT_FORMAT_VERSION = 1;

const dataBlockSchema: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string' },
    jsonSchema: { type: ['object', 'boolean'] },
  },
  required: ['name', 'jsonSchema'],
  additionalProperties: false,
};

export const processDocumentSchema: JsonSchema = {
  type: 'object',
  properties: {
    formatVersion: { const: PROCESS_DOCUMENT_FORMAT_VERSION },
    name: { type: 'string', minLength: 1, maxLength: 500 },
    description: { type: 'string', maxLength: 10000 },
    maxRetries: { type: 'integer', minimum: 0, maximum: 100 },
    errorWebhookUrl: { type: ['string', 'null'], maxLength: 2000, pattern: HTTP_URL_PATTERN },
    timeoutSeconds: { type: 'integer', minimum: 0, maximum: MAX_PROCESS_TIMEOUT_SECONDS },
    nodes: {
      type: 'array',
      maxItems: 5000,
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', minLength: 1 },
          type: { type: 'string', minLength: 1, maxLength: 100 },
          position: {
            type: 'object',
            properties: { x: { type: 'number' }, y: { type: 'number' } },
            required: ['x', 'y'],
            additionalProperties: false,
          },
          config: { type: 'object', properties: { label: { type: 'string' } } },
        },
        required: ['type'],
        additionalProperties: false,
      },
    },
    edges: {
      type: 'array',
      maxItems: 20000,
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', minLength: 1 },
          sourceNodeId: { type: 'string', minLength: 1 },
          targetNodeId: { type: 'string', minLength: 1 },
          sourceHandle: { type: 'string', minLength: 1 },
          targetHandle: { type: 'string', minLength: 1 },
        },
        required: ['sourceNodeId', 'targetNodeId'],
        additionalProperties: false,
      },
    },
    schemaDependencies: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          name: { type: 'string', minLength: 1, maxLength: 500 },
          description: { type: 'string' },
          dataBlocks: { type: 'array', items: dataBlockSchema, maxItems: 500 },
        },
        required: ['name'],
        additionalProperties: false,
      },
    },
    exportedFrom: { type: 'object' },
    testCases: { type: 'array', maxItems: 1000, items: exportedTestCaseSchema },
  },
  required: ['name', 'nodes', 'edges'],
  additionalProperties: false,
};

/** bulk-import takes one document or an array of them; each document is checked on its own. */
export const bulkImportBodySchema: JsonSchema = {
  type: ['object', 'array'],
  maxItems: 100,
};

export const forkProcessBodySchema: JsonSchema = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 500 } },
  required: ['name'],
  additionalProperties: false,
};
