import type { ErrorObject, ValidateFunction } from 'ajv';
import { tenantSchemaAjv } from '@weft/contracts';

/**
 * Compiled JSON schemas of data blocks and response schemas, by their JSON text: compiling is
 * the slow part, and the same schemas come back on every execution. Bounded, oldest dropped.
 */
const MAX_COMPILED = 500;

export class JsonSchemaValidators {
  /**
   * Users' schemas: their patterns run in linear time (RE2). One Ajv serves every organization:
   * its compile() gives validators that renew the pattern work budget on each call, so one
   * organization's validation cannot spend another's, and fail when a string went unchecked.
   */
  private readonly ajv = tenantSchemaAjv();
  private readonly compiled = new Map<string, ValidateFunction>();

  /** Violations of `value` as `<path> <message>` lines; empty when valid. Throws when the schema does not compile. */
  violations(schema: unknown, value: unknown): string[] {
    const validate = this.validatorFor(schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(describe);
  }

  private validatorFor(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (validate) {
      this.compiled.delete(key);
    } else {
      validate = this.ajv.compile(schema as object);
      this.ajv.removeSchema(schema as object);
      if (this.compiled.size >= MAX_COMPILED) this.compiled.delete(this.compiled.keys().next().value as string);
    }
    this.compiled.set(key, validate);
    return validate;
  }
}

const describe = (error: ErrorObject): string => {
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (${String((error.params as { additionalProperty?: string }).additionalProperty)})`
      : error.keyword === 'enum'
        ? ` (${JSON.stringify((error.params as { allowedValues?: unknown }).allowedValues)})`
        : '';
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}${extra}`;
};
