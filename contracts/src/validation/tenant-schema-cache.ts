import type { ValidateFunction } from 'ajv';
import { tenantSchemaAjv } from './tenant-schemas.js';

/**
 * Users' compiled JSON Schemas by their JSON text, for a long-lived service: compiling is the slow
 * part (up to some hundreds of milliseconds for a schema at the pattern caps) and the same schemas
 * come back on every run. At most `maxSchemas` are kept, least recently used dropped.
 *
 * An Ajv instance keeps every pattern and piece of code it ever compiled (its shared scope),
 * whatever is removed, so one instance for a service's life grows without end (a new schema per
 * run would do it). Each instance compiles at most `schemasPerAjv` schemas and is then replaced;
 * a replaced one is freed once the cache no longer holds a validator it made. Measured compiling
 * 500 schemas at the pattern caps (100,000 distinct patterns): the heap grew by about 280 MiB over
 * the first 300 and then stayed there.
 */
export class TenantSchemaCache {
  private ajv = tenantSchemaAjv();
  private compiledOnAjv = 0;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    private readonly maxSchemas = 100,
    private readonly schemasPerAjv = 50,
  ) {}

  /** The validator of `schema`; throws the compile error when the schema is refused. */
  validator(schema: unknown): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (validate) {
      this.compiled.delete(key);
    } else {
      if (this.compiledOnAjv >= this.schemasPerAjv) {
        this.ajv = tenantSchemaAjv();
        this.compiledOnAjv = 0;
      }
      this.compiledOnAjv += 1;
      validate = this.ajv.compile(schema as object);
      if (typeof schema === 'object' && schema !== null) this.ajv.removeSchema(schema);
      if (this.compiled.size >= this.maxSchemas) this.compiled.delete(this.compiled.keys().next().value as string);
    }
    this.compiled.set(key, validate);
    return validate;
  }
}
