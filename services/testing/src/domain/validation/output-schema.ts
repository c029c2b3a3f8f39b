import type { ErrorObject } from 'ajv';
import { schemaCompileError, TenantSchemaCache, type ValidationError } from '@weft/contracts';
import { jsonPathOf, segmentsOfPointer } from './json-path.js';

/** Why an expectedOutputSchema does not compile, or undefined when it does. */
export const outputSchemaProblem = schemaCompileError;

// Every violation is reported (allErrors), so a failed run lists them all; patterns run in linear
// time, and each validation has its own pattern work budget (see tenantSchemaAjv).
const schemas = new TenantSchemaCache();

/** The violations of `output` against `schema`, each at the JSONPath of the offending value. */
export function validateOutput(schema: Record<string, unknown> | boolean, output: unknown): ValidationError[] {
  const validate = schemas.validator(schema);
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
