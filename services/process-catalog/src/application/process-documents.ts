import {
  badRequest,
  conflict,
  PROCESS_DOCUMENT_FORMAT_VERSION,
  processDocumentSchema,
  ProblemError,
  schemaCompileError,
  validateAgainst,
  type ExportedTestCase,
  type ProblemViolation,
  type ProcessDocument,
  type SchemaDependency,
} from '@weft/contracts';
import { WrongExpectedVersionError, type StreamAppend } from '@weft/event-store';
import { decide } from '../domain/process/decide.js';
import { processStreamId, type ProcessEvent } from '../domain/process/events.js';
import { DEFAULT_SOURCE_HANDLE, DEFAULT_TARGET_HANDLE, type Graph, type GraphNode } from '../domain/process/graph.js';
import { initialProcessState } from '../domain/process/state.js';
import { decideSchema } from '../domain/schema/decide.js';
import { schemaStreamId, type DataBlock, type SchemaEvent } from '../domain/schema/events.js';
import { initialSchemaState } from '../domain/schema/state.js';
import { sameJson } from '../domain/shared/same-json.js';
import { isUuid } from '../domain/shared/uuid.js';
import { assertTestCasesCanArrive, carryTestCases, testCasesOf } from './carried-test-cases.js';
import type { CatalogApplication } from './catalog-application.js';
import type { Caller } from './caller.js';
import { assertOrganizationAccess } from './process-access.js';
import { compileErrorsOf, type SchemaRecord } from './schemas.js';
import { beyondShapeErrors, tolerantDocument } from './tolerant-document.js';

/** Defaults of a new process, shared with the create endpoint. */
export const DEFAULT_TIMEOUT_SECONDS = 300;

const referencedSchemaIds = (nodes: readonly GraphNode[]): string[] => [
  ...new Set(
    nodes.flatMap((node) =>
      typeof node.config.schemaId === 'string' && node.config.schemaId ? [node.config.schemaId] : [],
    ),
  ),
];

/** The export document of a process: camelCase, schemas inline. */
export async function exportProcess(
  app: CatalogApplication,
  processId: string,
  caller: Caller,
): Promise<ProcessDocument> {
  const { state, revision } = await app.queries.accessibleState(processId, caller);
  const testCases = await testCasesOf(app, processId, state.organizationId);
  const schemaDependencies: Record<string, SchemaDependency> = {};
  for (const schemaId of referencedSchemaIds(state.nodes)) {
    const schema = await app.schemas.find(schemaId);
    if (!schema || schema.organizationId !== state.organizationId) continue;
    schemaDependencies[schemaId] = {
      id: schema.id,
      name: schema.name,
      description: schema.description,
      dataBlocks: schema.dataBlocks,
    };
  }
  return {
    formatVersion: PROCESS_DOCUMENT_FORMAT_VERSION,
    name: state.name,
    description: state.description,
    maxRetries: state.maxRetries,
    errorWebhookUrl: state.errorWebhookUrl,
    timeoutSeconds: state.timeoutSeconds,
    nodes: state.nodes.map((node) => ({ id: node.id, type: node.type, position: node.position, config: node.config })),
    edges: state.edges.map((edge) => ({ ...edge })),
    schemaDependencies,
    exportedFrom: { processId, organizationId: state.organizationId, revision, exportedAt: app.runtime.now() },
    // Absent when no testing service answers. Node ids are the document's node keys: inputNodeId stays.
    ...(testCases ? { testCases } : {}),
  };
}

const prefixed = (prefix: string, violations: readonly ProblemViolation[]): ProblemViolation[] =>
  violations.map((violation) => ({ ...violation, path: `${prefix}${violation.path === '/' ? '' : violation.path}` }));

const problemViolations = (error: unknown, prefix: string): ProblemViolation[] => {
  if (!(error instanceof ProblemError)) throw error;
  return prefixed(prefix, error.problem.errors ?? [{ path: '', message: error.message }]);
};

/** Whether a schema holds exactly what a dependency entry describes (given UUID block ids included). */
const sameContent = (schema: SchemaRecord, dependency: SchemaDependency): boolean => {
  const blocks = dependency.dataBlocks ?? [];
  return (
    schema.name === dependency.name &&
    schema.description === (dependency.description ?? '') &&
    schema.dataBlocks.length === blocks.length &&
    blocks.every((block, index) => {
      const copied = schema.dataBlocks[index];
      return (
        copied !== undefined &&
        copied.name === block.name &&
        copied.description === (block.description ?? '') &&
        sameJson(copied.jsonSchema, block.jsonSchema) &&
        (block.id === undefined || !isUuid(block.id) || copied.id === block.id)
      );
    })
  );
};

async function unchangedImportedCopy(
  app: CatalogApplication,
  organizationId: string,
  sourceSchemaId: string,
  dependency: SchemaDependency,
): Promise<SchemaRecord | undefined> {
  const copies = await app.schemas.importedCopies(organizationId, sourceSchemaId);
  return copies.find((copy) => sameContent(copy, dependency));
}

const UUID_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

interface PlannedImport {
  processId: string;
  appends: StreamAppend[];
  /** The document's test cases with inputNodeId mapped to the new node ids. */
  testCases: ExportedTestCase[];
}

/** Each test case must name an input node of the document by its key and carry a schema that compiles. */
function plannedTestCases(
  doc: ProcessDocument,
  nodeIdFor: ReadonlyMap<string, string>,
  prefix: string,
  violations: ProblemViolation[],
): ExportedTestCase[] {
  const inputKeys = new Set(
    doc.nodes.flatMap((node, index) => (node.type === 'inputNode' ? [node.id ?? String(index)] : [])),
  );
  return (doc.testCases ?? []).map((testCase, index) => {
    if (!inputKeys.has(testCase.inputNodeId)) {
      violations.push({
        path: `${prefix}/testCases/${index}/inputNodeId`,
        message: `no input node with key "${testCase.inputNodeId}"`,
      });
    }
    const compileError = schemaCompileError(testCase.expectedOutputSchema ?? {});
    if (compileError) {
      violations.push({
        path: `${prefix}/testCases/${index}/expectedOutputSchema`,
        message: `does not compile: ${compileError}`,
      });
    }
    return { ...testCase, inputNodeId: nodeIdFor.get(testCase.inputNodeId) ?? testCase.inputNodeId };
  });
}

/**
 * Plans the import of one document into `organizationId`: new node and edge ids, schemas reused
 * when the organization has them and created from the dependencies otherwise. Throws one 400
 * with every problem found; plans nothing partially.
 */
async function planImport(
  app: CatalogApplication,
  organizationId: string,
  raw: unknown,
  caller: Caller,
  prefix: string,
): Promise<PlannedImport> {
  const shapeErrors = prefixed(prefix, validateAgainst(processDocumentSchema, raw));
  // A malformed document is still read as far as it goes, so one answer lists every problem.
  const doc = shapeErrors.length === 0 ? (raw as ProcessDocument) : tolerantDocument(raw);
  const violations: ProblemViolation[] = [];
  const metadata = { now: app.runtime.now(), actorId: caller.actor.userId, actorName: caller.actor.userName };
  const eventMetadata = {
    actorId: caller.actor.userId,
    actorName: caller.actor.userName,
    organizationId,
    ...(caller.correlationId ? { correlationId: caller.correlationId } : {}),
    ...(caller.traceId ? { traceId: caller.traceId } : {}),
  };
  const appends: StreamAppend[] = [];

  // Schemas: reuse the organization's own, create the others under new ids.
  const schemaIdFor = new Map<string, string>();
  const blockIdFor = new Map<string, Map<string, string>>();
  for (const [key, dependency] of Object.entries(doc.schemaDependencies ?? {})) {
    const existing = await app.schemas.find(key);
    if (existing && existing.organizationId === organizationId) {
      schemaIdFor.set(key, key);
      continue;
    }
    // Importing the same export again reuses the copy the first import made, if it is unchanged.
    const copy = await unchangedImportedCopy(app, organizationId, key, dependency);
    if (copy) {
      schemaIdFor.set(key, copy.id);
      blockIdFor.set(
        key,
        new Map(
          (dependency.dataBlocks ?? []).flatMap((block, index) => {
            const copied = copy.dataBlocks[index];
            return block.id !== undefined && copied ? [[block.id, copied.id] as const] : [];
          }),
        ),
      );
      continue;
    }
    const schemaId = app.runtime.newId();
    schemaIdFor.set(key, schemaId);
    const blockIds = new Map<string, string>();
    const dataBlocks: DataBlock[] = (dependency.dataBlocks ?? []).map((block) => {
      const id = block.id !== undefined && isUuid(block.id) ? block.id : app.runtime.newId();
      if (block.id !== undefined) blockIds.set(block.id, id);
      return {
        id,
        name: block.name,
        description: block.description ?? '',
        jsonSchema: block.jsonSchema as Record<string, unknown>,
      };
    });
    blockIdFor.set(key, blockIds);
    try {
      const events: SchemaEvent[] = decideSchema(
        {
          type: 'CreateSchema',
          data: {
            schemaId,
            organizationId,
            name: dependency.name,
            description: dependency.description ?? '',
            dataBlocks,
            importedFrom: key,
            jsonSchemaErrors: compileErrorsOf(dataBlocks),
          },
          metadata,
        },
        initialSchemaState(),
      );
      appends.push({
        streamId: schemaStreamId(schemaId),
        events: events.map((event) => ({ ...event, metadata: eventMetadata })),
        expectedVersion: 'no_stream',
      });
    } catch (error) {
      violations.push(...problemViolations(error, `${prefix}/schemaDependencies/${key}`));
    }
  }

  // Nodes: every node gets a new id; document keys (or indexes) only link edges to nodes.
  const nodeIdFor = new Map<string, string>();
  const nodes: GraphNode[] = [];
  for (const [index, node] of doc.nodes.entries()) {
    const key = node.id ?? String(index);
    if (nodeIdFor.has(key))
      violations.push({ path: `${prefix}/nodes/${index}/id`, message: `node key "${key}" is used twice` });
    const id = app.runtime.newId();
    nodeIdFor.set(key, id);
    const config = { ...(node.config ?? {}) };
    if (typeof config.schemaId === 'string' && config.schemaId) {
      const original = config.schemaId;
      const mapped = schemaIdFor.get(original);
      if (mapped) {
        config.schemaId = mapped;
        const block =
          typeof config.dataBlockId === 'string' ? blockIdFor.get(original)?.get(config.dataBlockId) : undefined;
        if (block) config.dataBlockId = block;
      } else {
        const existing = await app.schemas.find(original);
        if (!existing || existing.organizationId !== organizationId) {
          violations.push({
            path: `${prefix}/nodes/${index}/config/schemaId`,
            message: `schema ${original} is neither in schemaDependencies nor in the organization`,
          });
        }
      }
    }
    nodes.push({ id, type: node.type, position: node.position ?? { x: 0, y: 0 }, config });
  }
  const edges = doc.edges.map((edge, index) => {
    const source = nodeIdFor.get(edge.sourceNodeId);
    const target = nodeIdFor.get(edge.targetNodeId);
    if (!source)
      violations.push({
        path: `${prefix}/edges/${index}/sourceNodeId`,
        message: `no node with key "${edge.sourceNodeId}"`,
      });
    if (!target)
      violations.push({
        path: `${prefix}/edges/${index}/targetNodeId`,
        message: `no node with key "${edge.targetNodeId}"`,
      });
    return {
      id: app.runtime.newId(),
      sourceNodeId: source ?? edge.sourceNodeId,
      targetNodeId: target ?? edge.targetNodeId,
      sourceHandle: edge.sourceHandle ?? DEFAULT_SOURCE_HANDLE,
      targetHandle: edge.targetHandle ?? DEFAULT_TARGET_HANDLE,
    };
  });

  const processId = app.runtime.newId();
  try {
    const events: ProcessEvent[] = decide(
      {
        type: 'CreateProcess',
        data: {
          processId,
          organizationId,
          name: doc.name,
          description: doc.description ?? '',
          maxRetries: doc.maxRetries ?? 0,
          errorWebhookUrl: doc.errorWebhookUrl ?? null,
          timeoutSeconds: doc.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
          nodes,
          edges,
          origin: {
            kind: 'import',
            ...(doc.exportedFrom?.processId ? { sourceProcessId: doc.exportedFrom.processId } : {}),
          },
        },
        metadata,
      },
      initialProcessState(),
    );
    appends.push({
      streamId: processStreamId(processId),
      events: events.map((event) => ({ ...event, metadata: { ...eventMetadata, processId } })),
      expectedVersion: 'no_stream',
    });
  } catch (error) {
    // Graph rule paths (/nodes/i, /edges/i, camelCase) are already document paths.
    // An edge to an unknown key was reported above already; keep one line per problem.
    const reported = new Set(violations.map((violation) => violation.path));
    const keyFor = new Map([...nodeIdFor].map(([key, id]) => [id, key]));
    violations.push(
      ...problemViolations(error, prefix)
        .filter((violation) => !reported.has(violation.path))
        // Messages name the nodes by the ids the import would have given them; the author knows the keys.
        .map((violation) => ({
          ...violation,
          message: violation.message.replace(UUID_TEXT, (id) =>
            keyFor.has(id) ? `"${keyFor.get(id) as string}"` : id,
          ),
        })),
    );
  }
  if (shapeErrors.length > 0) {
    throw badRequest('the import document is malformed; nothing was imported', [
      ...shapeErrors,
      ...beyondShapeErrors(shapeErrors, violations),
    ]);
  }
  const testCases = plannedTestCases(doc, nodeIdFor, prefix, violations);
  if (violations.length > 0) throw badRequest('the import document has problems; nothing was imported', violations);
  return { processId, appends, testCases };
}

/** Imports one document atomically: its new schemas and the process in one transaction. */
export async function importProcess(
  app: CatalogApplication,
  organizationId: string,
  document: unknown,
  caller: Caller,
  prefix = '',
): Promise<string> {
  assertOrganizationAccess(organizationId, caller);
  const plan = await planImport(app, organizationId, document, caller, prefix);
  await assertTestCasesCanArrive(app, plan.testCases);
  try {
    await app.store.appendMany(plan.appends);
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) throw conflict('an id of the import is taken; retry');
    throw error;
  }
  await carryTestCases(app, plan.processId, organizationId, plan.testCases, caller);
  return plan.processId;
}

/** A copy of a process in its own organization: new node and edge ids, same configs and schema references. */
export async function forkProcess(
  app: CatalogApplication,
  processId: string,
  name: string,
  caller: Caller,
): Promise<string> {
  const { state } = await app.queries.accessibleState(processId, caller);
  const nodeIdFor = new Map(state.nodes.map((node) => [node.id, app.runtime.newId()]));
  const graph: Graph = {
    nodes: state.nodes.map((node) => ({ ...node, id: nodeIdFor.get(node.id) as string })),
    edges: state.edges.map((edge) => ({
      ...edge,
      id: app.runtime.newId(),
      sourceNodeId: nodeIdFor.get(edge.sourceNodeId) ?? edge.sourceNodeId,
      targetNodeId: nodeIdFor.get(edge.targetNodeId) ?? edge.targetNodeId,
    })),
  };
  // Read before the fork exists, so an unreachable testing service refuses the fork without a change.
  const testCases = (await testCasesOf(app, processId, state.organizationId)) ?? [];
  const forkId = app.runtime.newId();
  await app.processes.execute(
    forkId,
    {
      type: 'CreateProcess',
      data: {
        processId: forkId,
        organizationId: state.organizationId,
        name,
        description: state.description,
        maxRetries: state.maxRetries,
        errorWebhookUrl: state.errorWebhookUrl,
        timeoutSeconds: state.timeoutSeconds,
        ...graph,
        origin: { kind: 'fork', sourceProcessId: processId },
      },
    },
    caller,
  );
  const mapped = testCases.map((testCase) => ({
    ...testCase,
    inputNodeId: nodeIdFor.get(testCase.inputNodeId) ?? testCase.inputNodeId,
  }));
  await carryTestCases(app, forkId, state.organizationId, mapped, caller);
  return forkId;
}
