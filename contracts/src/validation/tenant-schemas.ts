import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { RE2JS } from 're2js';

/**
 * Ajv for JSON Schemas that users write (data blocks, test cases' expected outputs, LLM response
 * schemas). Their `pattern`s run on a service's event loop: with JavaScript's backtracking engine
 * a pattern such as `^(a+)+$` on a 40-character string would take hours and freeze every
 * organization. RE2 (re2js, pure JS) matches in time linear in the text; a pattern it cannot run
 * that way (backreferences, lookaround) does not compile, so the schema is refused with that
 * message. Formats as the contract schemas have them.
 */
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as unknown as (
  instance: Ajv,
) => Ajv;

const linearPattern = Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 'RE2JS.compile' });

export function tenantSchemaAjv(): Ajv {
  return addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false, code: { regExp: linearPattern } }));
}

/** Whether a user-supplied JSON Schema compiles; the compiler's message when it does not. */
export function schemaCompileError(schema: unknown): string | undefined {
  try {
    tenantSchemaAjv().compile(schema as object);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
