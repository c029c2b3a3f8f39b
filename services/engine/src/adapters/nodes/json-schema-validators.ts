import type { ErrorObject } from 'ajv';
import { TenantSchemaCache } from '@weft/contracts';

/** Data block and response schemas (users' schemas: their patterns run in linear time, on RE2). */
export class JsonSchemaValidators {
  private readonly schemas = new TenantSchemaCache();

  /** Violations of `value` as `<path> <message>` lines; empty when valid. Throws when the schema does not compile. */
  violations(schema: unknown, value: unknown): string[] {
    const validate = this.schemas.validator(schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map(describe);
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
