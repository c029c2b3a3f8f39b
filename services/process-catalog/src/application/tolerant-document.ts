import type { ProblemViolation, ProcessDocument, SchemaDependency } from '@weft/contracts';

/**
 * A malformed import document read as far as it goes, so the import can list the problems of its
 * well-formed parts (labels, edges, handles, JSON Schemas) next to the shape errors. Every part of
 * the wrong shape becomes an empty placeholder at the same index, so paths stay document paths.
 */
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

const position = (value: unknown): { x: number; y: number } | undefined =>
  isObject(value) && typeof value.x === 'number' && typeof value.y === 'number'
    ? { x: value.x, y: value.y }
    : undefined;

function dependency(value: unknown): SchemaDependency {
  const entry = isObject(value) ? value : {};
  return {
    name: text(entry.name) ?? '',
    description: text(entry.description) ?? '',
    dataBlocks: list(entry.dataBlocks).map((raw) => {
      const block = isObject(raw) ? raw : {};
      const id = text(block.id);
      const jsonSchema = block.jsonSchema;
      return {
        ...(id === undefined ? {} : { id }),
        name: text(block.name) ?? '',
        description: text(block.description) ?? '',
        jsonSchema: isObject(jsonSchema) || typeof jsonSchema === 'boolean' ? jsonSchema : {},
      };
    }),
  };
}

export function tolerantDocument(raw: unknown): ProcessDocument {
  const doc = isObject(raw) ? raw : {};
  const integer = (value: unknown): number | undefined =>
    typeof value === 'number' && Number.isInteger(value) ? value : undefined;
  const maxRetries = integer(doc.maxRetries);
  const timeoutSeconds = integer(doc.timeoutSeconds);
  const errorWebhookUrl = text(doc.errorWebhookUrl);
  return {
    name: text(doc.name) ?? '',
    description: text(doc.description) ?? '',
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    ...(errorWebhookUrl === undefined ? {} : { errorWebhookUrl }),
    nodes: list(doc.nodes).map((rawNode) => {
      const node = isObject(rawNode) ? rawNode : {};
      const id = text(node.id);
      const at = position(node.position);
      return {
        ...(id === undefined ? {} : { id }),
        type: text(node.type) ?? '',
        ...(at ? { position: at } : {}),
        config: isObject(node.config) ? node.config : {},
      };
    }),
    edges: list(doc.edges).map((rawEdge) => {
      const edge = isObject(rawEdge) ? rawEdge : {};
      const sourceHandle = text(edge.sourceHandle);
      const targetHandle = text(edge.targetHandle);
      return {
        sourceNodeId: text(edge.sourceNodeId) ?? '',
        targetNodeId: text(edge.targetNodeId) ?? '',
        ...(sourceHandle === undefined ? {} : { sourceHandle }),
        ...(targetHandle === undefined ? {} : { targetHandle }),
      };
    }),
    schemaDependencies: Object.fromEntries(
      Object.entries(isObject(doc.schemaDependencies) ? doc.schemaDependencies : {}).map(([key, value]) => [
        key,
        dependency(value),
      ]),
    ),
  };
}

/**
 * The problems found in the readable parts, minus those at or under a path that already has a
 * shape error (a placeholder's problems would only repeat it).
 */
export function beyondShapeErrors(
  shapeErrors: readonly ProblemViolation[],
  problems: readonly ProblemViolation[],
): ProblemViolation[] {
  const covered = shapeErrors.map((error) => (error.path === '/' ? '' : error.path));
  return problems.filter(
    (problem) => !covered.some((path) => problem.path === path || problem.path.startsWith(`${path}/`)),
  );
}
