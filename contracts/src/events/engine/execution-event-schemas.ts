import type { JsonSchema } from '../../http/http-route.js';
import type { ExecutionEventType } from './execution-events.js';
import { GRAPH_SNAPSHOT_RECORDED, graphSnapshotRecordedSchema } from './graph-snapshot-events.js';

/**
 * JSON Schema of each execution event's `data` at its current schema version (subscribers validate
 * with these). Version 2 of NodeStarted records the input as references; version 2 of
 * ExecutionStarted, NodeCompleted and ExecutionCompleted may carry a large value as `<field>Ref`.
 * Version 3 of NodeCompleted and version 2 of NodeFailed may carry the node's start
 * (`CarriedNodeStart`) when no NodeStarted was recorded for that run. Version 3 of ExecutionStarted
 * names its graph (`graphSnapshotId`, recorded by `GraphSnapshotRecorded`) instead of carrying it;
 * an earlier version's event, which carries `graphSnapshot`, is valid at version 3 as it is.
 */
const id = { type: 'string', minLength: 1 } as const;
const time = { type: 'string', format: 'date-time' } as const;
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const count = { type: 'integer', minimum: 0 } as const;
const iteration = {
  type: 'array',
  items: { type: 'object', required: ['loopNodeId', 'index'], properties: { loopNodeId: id, index: count } },
} as const;

const valueRef = {
  type: 'object',
  required: ['url', 'size'],
  properties: { url: { type: 'string', pattern: '^weft-blob://' }, size: count },
} as const;
/** The value inline, or its blob reference instead. */
const tokenUsage = {
  type: 'object',
  required: ['model', 'calls', 'prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: {
    model: str,
    calls: count,
    prompt_tokens: count,
    completion_tokens: count,
    total_tokens: count,
  },
} as const;
const inlineOrRef = (field: string) => ({ anyOf: [{ required: [field] }, { required: [`${field}Ref`] }] });
const inputFrom = {
  type: 'array',
  items: { type: 'object', required: ['nodeId'], properties: { nodeId: id, iteration, handle: str } },
} as const;
const attempt = { type: 'integer', minimum: 1 } as const;
/** A node's start as its NodeCompleted or NodeFailed carries it: all of these or none. */
const carriedStart = { nodeName: str, nodeType: str, inputFrom, attempt, startedAt: time } as const;
const allOrNone = (fields: string[]) => ({
  anyOf: [{ required: fields }, { not: { anyOf: fields.map((field) => ({ required: [field] })) } }],
});
const carriedStartFields = allOrNone(Object.keys(carriedStart));

const event = (required: string[], properties: Record<string, unknown>): JsonSchema => ({
  type: 'object',
  required: ['executionId', ...required],
  properties: { executionId: id, ...properties },
});

/** Every event type published on weft.events.execution.<org>.<process>.<type>. */
export type PublishedExecutionEventType = ExecutionEventType | typeof GRAPH_SNAPSHOT_RECORDED;

export const executionEventSchemas: Record<PublishedExecutionEventType, { schemaVersion: number; schema: JsonSchema }> =
  {
    ExecutionAccepted: {
      schemaVersion: 1,
      schema: event(['processId', 'organizationId', 'triggerNodeId', 'source', 'acceptedAt'], {
        processId: id,
        organizationId: id,
        triggerNodeId: id,
        triggeredByUserId: nullableStr,
        source: str,
        acceptedAt: time,
      }),
    },
    ExecutionStarted: {
      schemaVersion: 3,
      schema: {
        ...event(['processId', 'organizationId', 'triggerNodeId', 'startedAt', 'timeoutSeconds'], {
          processId: id,
          organizationId: id,
          processRevision: count,
          triggerNodeId: id,
          inputData: {},
          inputDataRef: valueRef,
          graphSnapshotId: id,
          graphSnapshot: { type: 'object', required: ['nodes', 'edges'] },
          triggeredByUserId: nullableStr,
          source: str,
          timeoutSeconds: { type: 'number', exclusiveMinimum: 0 },
          maxRetries: count,
          errorWebhookUrl: nullableStr,
          startedAt: time,
        }),
        allOf: [
          inlineOrRef('inputData'),
          { anyOf: [{ required: ['graphSnapshotId'] }, { required: ['graphSnapshot'] }] },
        ],
      },
    },
    NodeStarted: {
      schemaVersion: 2,
      schema: event(['nodeId', 'nodeName', 'nodeType', 'inputFrom', 'startedAt'], {
        nodeId: id,
        nodeName: str,
        nodeType: str,
        inputFrom,
        loopItem: {},
        loopItemRef: valueRef,
        attempt,
        startedAt: time,
        iteration,
      }),
    },
    NodeCompleted: {
      schemaVersion: 3,
      schema: {
        ...event(['nodeId', 'handles', 'completedAt', 'durationMs'], {
          nodeId: id,
          ...carriedStart,
          outputData: {},
          outputDataRef: valueRef,
          handles: { type: 'array', items: str },
          completedAt: time,
          durationMs: count,
          iteration,
          tokenUsage,
        }),
        allOf: [inlineOrRef('outputData'), carriedStartFields],
      },
    },
    NodeFailed: {
      schemaVersion: 2,
      schema: {
        ...event(['nodeId', 'error', 'completedAt'], {
          nodeId: id,
          ...carriedStart,
          error: str,
          completedAt: time,
          durationMs: count,
          iteration,
        }),
        ...carriedStartFields,
      },
    },
    NodeSkipped: {
      schemaVersion: 1,
      schema: event(['nodeId', 'skippedAt'], { nodeId: id, nodeName: str, nodeType: str, skippedAt: time, iteration }),
    },
    ExecutionRetryScheduled: {
      schemaVersion: 1,
      schema: event(['attempt', 'failedNodeId', 'error', 'retryAt'], {
        attempt: { type: 'integer', minimum: 2 },
        failedNodeId: id,
        error: str,
        retryAt: time,
      }),
    },
    ExecutionCompleted: {
      schemaVersion: 2,
      schema: {
        ...event(['completedAt', 'durationSeconds'], {
          outputData: { type: 'object' },
          outputDataRef: valueRef,
          completedAt: time,
          durationSeconds: { type: 'number', minimum: 0 },
        }),
        ...inlineOrRef('outputData'),
      },
    },
    ExecutionFailed: {
      schemaVersion: 1,
      schema: event(['errorMessage', 'completedAt'], {
        errorMessage: str,
        failedNode: {
          anyOf: [
            { type: 'null' },
            {
              type: 'object',
              required: ['id', 'name', 'type', 'error'],
              properties: { id, name: str, type: str, error: str },
            },
          ],
        },
        attempt: { type: 'integer', minimum: 1 },
        completedAt: time,
        durationSeconds: { type: 'number', minimum: 0 },
        deliveryCount: { type: 'integer', minimum: 1 },
      }),
    },
    ExecutionTimedOut: {
      schemaVersion: 1,
      schema: event(['errorMessage', 'completedAt'], {
        errorMessage: str,
        completedAt: time,
        durationSeconds: { type: 'number', minimum: 0 },
      }),
    },
    ExecutionCancelled: {
      schemaVersion: 1,
      schema: event(['completedAt'], {
        cancelledByUserId: nullableStr,
        completedAt: time,
        durationSeconds: { type: 'number', minimum: 0 },
      }),
    },
    ExecutionResumed: {
      schemaVersion: 1,
      schema: event(['runningNodeIds', 'resumedAt'], {
        runningNodeIds: { type: 'array', items: str },
        resumedAt: time,
      }),
    },
    ExecutionParked: {
      schemaVersion: 1,
      schema: event(['parkedAt', 'dueAt'], { parkedAt: time, dueAt: time }),
    },
    ErrorWebhookDeliveryScheduled: {
      schemaVersion: 1,
      schema: event(['scheduledAt'], { scheduledAt: time }),
    },
    ErrorWebhookDeliveryAttempted: {
      schemaVersion: 1,
      schema: event(['attempt', 'outcome', 'attemptedAt'], {
        attempt: { type: 'integer', minimum: 1 },
        outcome: { enum: ['delivered', 'retrying', 'abandoned'] },
        httpStatus: { type: ['integer', 'null'] },
        error: nullableStr,
        attemptedAt: time,
        nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
      }),
    },
    [GRAPH_SNAPSHOT_RECORDED]: graphSnapshotRecordedSchema,
  };
