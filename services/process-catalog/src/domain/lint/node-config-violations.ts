import { nodeConfigSchemas, validateAgainst, validateNodeConfig, type JsonSchema } from '@weft/contracts';
import type { Violation } from '../shared/violation.js';

/**
 * The engine's config schema violations of one node, as lint reports them. A schema that picks
 * one of several shapes by `mode` (the conditional's `conditions` / `switch`) makes ajv report the
 * errors of every shape; a node that names a valid mode is checked against that shape only, which
 * accepts and refuses exactly the same configs and lists only the problems that apply.
 */
const byMode = new Map<string, JsonSchema>();

const modeOf = (branch: JsonSchema): unknown =>
  ((branch.properties as Record<string, JsonSchema> | undefined)?.mode as { const?: unknown } | undefined)?.const;

function shapeForMode(type: string, mode: unknown): JsonSchema | undefined {
  if (typeof mode !== 'string') return undefined;
  const key = `${type}\u0000${mode}`;
  const cached = byMode.get(key);
  if (cached) return cached;
  const schema = nodeConfigSchemas[type];
  const branches = schema?.oneOf as JsonSchema[] | undefined;
  const branch = branches?.find((candidate) => modeOf(candidate) === mode);
  if (!schema || !branch) return undefined;
  const { oneOf: _branches, ...base } = schema;
  const shape: JsonSchema = {
    ...base,
    ...branch,
    required: [
      ...((base.required as string[] | undefined) ?? []),
      ...((branch.required as string[] | undefined) ?? []),
    ],
    properties: { ...(base.properties as object | undefined), ...(branch.properties as object | undefined) },
  };
  byMode.set(key, shape);
  return shape;
}

export function nodeConfigViolations(type: string, config: Record<string, unknown>): Violation[] {
  const shape = shapeForMode(type, config.mode);
  if (!shape) return validateNodeConfig(type, config);
  return validateAgainst(shape, config).map((violation) => ({
    path: `/config${violation.path === '/' ? '' : violation.path}`,
    message: violation.message,
  }));
}
