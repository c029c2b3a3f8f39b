import type { ErrorObject, ValidateFunction } from 'ajv';
import { schemaCompileError, tenantSchemaAjv, type ValidationError } from '@weft/contracts';
import { jsonPathOf, segmentsOfPointer } from './json-path.js';

/** Why an expectedOutputSchema does not compile, or undefined when it does. */
export const outputSchemaProblem = schemaCompileError;

/**
 * Compiled expected-output schemas by their JSON text: compiling is the slow part (up to some
 * hundreds of milliseconds for a schema at the pattern caps), and a test case's schema comes back
 * on every run. Bounded, least recently used dropped.
 */
const MAX_COMPILED = 200;
// Every violation is reported (allErrors), so a failed run lists them all; patterns run in linear
// time, and each validation has its own pattern work budget (see tenantSchemaAjv).
const ajv = tenantSchemaAjv();
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schema: Record<string, unknown> | boolean): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate) {
    compiled.delete(key);
  } else {
    validate = ajv.compile(schema);
    if (typeof schema === 'object') ajv.removeSchema(schema);
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  }
  compiled.set(key, validate);
  return validate;
}

/** The violations of `output` against `schema`, each at the JSONPath of the offending value. */
export function validateOutput(schema: Record<string, unknown> | boolean, output: unknown): ValidationError[] {
  const validate = validatorFor(schema);
  if (validate(output)) return [];
  return (validate.errors ?? []).map((error) => violationOf(error, output));
}

function violationOf(error: ErrorObject, output: unknown): ValidationError {
  const segments = segmentsOfPointer(error.instancePath, output);
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'required') {
    segments.push((error.params as { missingProperty: string }).missingProperty);
    message = 'is required';
  } else if (error.keyword === 'additionalProperties') {
    segments.push((error.params as { additionalProperty: string }).additionalProperty);
    message = 'is not allowed';
  } else if (error.keyword === 'enum') {
    message = `must be one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`;
  }
  const path = jsonPathOf(segments);
  return { field: path === '$' ? '$' : path.replace(/^\$\.?/, ''), message, path };
}

/** A violation as one readable line: `$.Out.total must be >= 0`. */
export const describeViolation = (violation: ValidationError): string => `${violation.path} ${violation.message}`;
