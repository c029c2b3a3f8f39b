import { Ajv, type ValidateFunction } from 'ajv';
import type { ProblemViolation } from '../problem.js';
import { nodeConfigSchemas } from './node-config-schemas.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

const validatorFor = (type: string): ValidateFunction | undefined => {
  let validate = compiled.get(type);
  if (!validate) {
    const schema = nodeConfigSchemas[type];
    if (!schema) return undefined;
    validate = ajv.compile(schema);
    compiled.set(type, validate);
  }
  return validate;
};

/** Node types whose configs the engine knows; others are refused at run time. */
export const knownNodeTypes = (): string[] => Object.keys(nodeConfigSchemas);

/**
 * Violations of one node's config, with paths under `pathPrefix` (e.g. `/nodes/3/config`).
 * An unknown type is one violation; an empty list means the config is valid.
 */
export function validateNodeConfig(type: string, config: unknown, pathPrefix = '/config'): ProblemViolation[] {
  const validate = validatorFor(type);
  if (!validate) return [{ path: pathPrefix.replace(/\/config$/, '/type'), message: `unknown node type "${type}"` }];
  if (validate(config)) return [];
  return (validate.errors ?? []).map((error) => ({
    path: `${pathPrefix}${error.instancePath}`,
    message: error.message ?? 'is invalid',
  }));
}
