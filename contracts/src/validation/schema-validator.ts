import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { JsonSchema } from '../http/http-route.js';
import type { ProblemViolation } from '../problem.js';

/**
 * One ajv instance for every contract schema: compiled once per schema object and cached,
 * reporting every violation (allErrors) as {path, message} for problem+json answers.
 */
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
// ajv-formats ships CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as unknown as (
  instance: Ajv,
) => Ajv;
addFormats(ajv);

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

const violation = (error: ErrorObject): ProblemViolation => {
  const base = error.instancePath || '';
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return { path: `${base}/${missing}`, message: 'is required' };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return { path: `${base}/${extra}`, message: 'is not allowed' };
  }
  return { path: base || '/', message: error.message ?? 'is invalid' };
};

/** Violations of `value` against `schema`; empty when valid. */
export function validateAgainst(schema: JsonSchema, value: unknown): ProblemViolation[] {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate(value) ? [] : (validate.errors ?? []).map(violation);
}
