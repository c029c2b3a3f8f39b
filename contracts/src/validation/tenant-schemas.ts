import {
  _,
  Ajv,
  str,
  type AnySchema,
  type CodeKeywordDefinition,
  type ErrorObject,
  type KeywordCxt,
  type ValidateFunction,
} from 'ajv';
import type { DataValidationCxt } from 'ajv/dist/types/index.js';
import addFormatsPlugin from 'ajv-formats';
import { RE2JS } from 're2js';
import { ecmaPatternToRe2, MAX_REPEAT_COUNT, UnsupportedPatternError } from './ecma-to-re2.js';

/**
 * Ajv for JSON Schemas that users write (data blocks, test cases' expected outputs, LLM response
 * schemas). Their `pattern`s and `patternProperties` run on a service's event loop: with
 * JavaScript's backtracking engine a pattern such as `^(a+)+$` on a 40-character string would
 * take hours and freeze every organization. They run on RE2 (re2js, pure JS) instead, which
 * matches in time linear in the text, after a rewrite from ECMAScript syntax (ecma-to-re2.ts);
 * a pattern RE2 cannot run (backreferences, lookaround) does not compile, and the schema is
 * refused with the reason. Formats as the contract schemas have them.
 *
 * Linear is not cheap: re2js can spend ~100 ns per character per instruction of the compiled
 * pattern (building DFA states), so a pattern is refused when it is longer than
 * {@link MAX_PATTERN_LENGTH} characters, repeats more than {@link MAX_REPEAT_COUNT} times or
 * compiles to more than {@link MAX_PATTERN_PROGRAM} instructions; a string is checked against a
 * pattern only up to {@link checkedLengthLimit} characters (at most {@link MAX_CHECKED_LENGTH},
 * fewer for a large pattern), so one check takes some tens of milliseconds at worst; the checks
 * of one validation (one call of a compiled validator) may cover {@link PATTERN_WORK_BUDGET}
 * characters × instructions in all; and a schema may name {@link MAX_SCHEMA_PATTERNS} distinct
 * patterns of {@link MAX_SCHEMA_PATTERN_CHARACTERS} characters in all. A string not checked fails
 * the whole validation saying why. The budgets count
 * work, not time, so a document validates the same on a busy machine as on a quiet one.
 */
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as unknown as (
  instance: Ajv,
) => Ajv;

export { MAX_REPEAT_COUNT };

/** The longest pattern accepted, in characters. */
export const MAX_PATTERN_LENGTH = 1_000;
/** The largest compiled pattern accepted, in RE2 instructions (re2js's programSize()). */
export const MAX_PATTERN_PROGRAM = 2_000;
/** The longest string checked against any pattern, in UTF-16 code units (JavaScript's length). */
export const MAX_CHECKED_LENGTH = 32_768;
/** Characters × instructions one check may cost; smaller patterns count as {@link SMALL_PROGRAM} instructions. */
const CHECK_BUDGET = 262_144;
const SMALL_PROGRAM = 8;
/**
 * Characters × instructions the pattern checks of one validation (one validator call) may cover
 * together (eight checks at the per-check budget: some 250 ms at re2js's worst, a few ms for
 * ordinary patterns); later strings are not checked.
 */
export const PATTERN_WORK_BUDGET = 8 * CHECK_BUDGET;

/** What checking a string against a pattern of `programSize` instructions counts per character. */
const workPerCharacter = (programSize: number): number => Math.max(programSize, SMALL_PROGRAM);

/** The longest string a pattern of that many RE2 instructions is checked against. */
export const checkedLengthLimit = (programSize: number): number =>
  Math.min(MAX_CHECKED_LENGTH, Math.floor(CHECK_BUDGET / workPerCharacter(programSize)));

/** A user's pattern compiled for RE2. */
export interface CompiledPattern {
  readonly source: string;
  /** RE2 instructions. */
  readonly programSize: number;
  /** The longest string it is checked against. */
  readonly maxLength: number;
  /** Whether it matches somewhere in `text`; false, without matching, for a text over maxLength. */
  test(text: string): boolean;
}

const quoted = (pattern: string): string => `"${pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern}"`;

/**
 * The user's ECMAScript `pattern`, compiled for RE2.
 * @throws Error naming the pattern and the reason when it is refused.
 */
export function compileTenantPattern(pattern: string): CompiledPattern {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    throw new Error(
      `pattern ${quoted(pattern)} is ${pattern.length} characters long, more than ${MAX_PATTERN_LENGTH}, the most allowed`,
    );
  }
  try {
    // JSON Schema patterns are ECMA-262 regular expressions with the u flag; what JavaScript
    // rejects is refused as JavaScript words it (only parsed, never run).
    new RegExp(pattern, 'u');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`pattern ${quoted(pattern)} does not compile: ${reason}`, { cause: error });
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(ecmaPatternToRe2(pattern));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const verb = error instanceof UnsupportedPatternError ? ':' : ' does not compile:';
    const hint = /^repeat count/.test(reason) ? ' (for the length of a string, use minLength and maxLength)' : '';
    throw new Error(`pattern ${quoted(pattern)}${verb} ${reason}${hint}`, { cause: error });
  }
  const programSize = re.programSize();
  if (programSize > MAX_PATTERN_PROGRAM) {
    throw new Error(
      `pattern ${quoted(pattern)} is too large: it compiles to ${programSize} RE2 instructions, more than ${MAX_PATTERN_PROGRAM}, the most allowed (fewer or smaller repeats make it smaller)`,
    );
  }
  const maxLength = checkedLengthLimit(programSize);
  // matcher().find() asks for the match's position, which takes re2js's one-pass, backtracking
  // or NFA matcher, whose work is proportional to characters × instructions; test() takes its DFA,
  // which can build a new state per character for classes with many range boundaries (seconds
  // within the budget). Both search unanchored and give the same answer.
  return {
    source: pattern,
    programSize,
    maxLength,
    test: (text) => text.length <= maxLength && re.matcher(text).find(),
  };
}

/** Why a string was not checked against a pattern. */
type Refusal = 'length' | 'budget';

/** A pattern as the validation code holds it (ajv's `code.regExp`), sharing its validator's work budget. */
interface BudgetedPattern {
  readonly source: string;
  readonly maxLength: number;
  test(text: string): boolean;
  toString(): string;
  /** Whether the last test() was refused for want of budget. */
  skipped: boolean;
  /** How many test() calls were refused for want of budget, ever. */
  skips: number;
}

/** The most distinct patterns one schema may name. */
export const MAX_SCHEMA_PATTERNS = 200;
/** The most characters the distinct patterns of one schema may have together. */
export const MAX_SCHEMA_PATTERN_CHARACTERS = 12_000;

/**
 * The patterns of one Ajv: compiled once (the last {@link MEMO_SIZE} are kept: a schema names each
 * several times), counted per schema compiled, and checked within a work budget that each
 * top-level validation renews ({@link PatternState.startValidation}).
 */
class PatternState {
  private spent = 0;
  /** The strings not checked in the current validation: pattern → why (the last reason). */
  readonly refused = new Map<string, Refusal>();
  private readonly memo = new Map<string, BudgetedPattern>();
  /** The distinct patterns of the schema being compiled, and their characters. */
  private named = new Set<string>();
  private namedCharacters = 0;

  constructor(readonly budget: number) {}

  startValidation(): void {
    this.spent = 0;
    this.refused.clear();
  }

  startCompile(): void {
    this.named = new Set();
    this.namedCharacters = 0;
  }

  /** The pattern for the validation code, counted against the caps of the schema being compiled. */
  pattern(source: string): BudgetedPattern {
    if (!this.named.has(source)) {
      this.named.add(source);
      this.namedCharacters += source.length;
      if (this.named.size > MAX_SCHEMA_PATTERNS) {
        throw new Error(`the schema has more than ${MAX_SCHEMA_PATTERNS} distinct patterns, the most allowed`);
      }
      if (this.namedCharacters > MAX_SCHEMA_PATTERN_CHARACTERS) {
        throw new Error(
          `the patterns of the schema have more than ${MAX_SCHEMA_PATTERN_CHARACTERS} characters in all, the most allowed`,
        );
      }
    }
    let pattern = this.memo.get(source);
    if (!pattern) {
      pattern = this.compile(source);
      if (this.memo.size >= MEMO_SIZE) this.memo.delete(this.memo.keys().next().value as string);
      this.memo.set(source, pattern);
    }
    return pattern;
  }

  private compile(source: string): BudgetedPattern {
    const compiled = compileTenantPattern(source);
    const pattern: BudgetedPattern = {
      source,
      maxLength: compiled.maxLength,
      skipped: false,
      skips: 0,
      toString: () => source,
      test: (text) => {
        pattern.skipped = false;
        if (text.length > compiled.maxLength) {
          this.refused.set(source, 'length');
          return false;
        }
        // An empty string costs a step too: a million of them are not free.
        const work = (text.length + 1) * workPerCharacter(compiled.programSize);
        if (this.spent + work > this.budget) {
          pattern.skipped = true;
          pattern.skips += 1;
          this.refused.set(source, 'budget');
          return false;
        }
        this.spent += work;
        return compiled.test(text);
      },
    };
    return pattern;
  }
}
const MEMO_SIZE = 256;

const notChecked = (budget: number): string =>
  `the pattern checks of this validation would cover more than ${budget} characters × pattern instructions, the most allowed`;

/** `pattern`, saying why a string failed when it was not checked (too long, out of time). */
function patternKeyword(patterns: (source: string) => BudgetedPattern, budget: number): CodeKeywordDefinition {
  return {
    keyword: 'pattern',
    type: 'string',
    schemaType: 'string',
    before: 'format',
    error: {
      message: ({ data, schemaCode, params }) =>
        _`${params.regExp}.skipped ? ${str`was not checked against pattern "${schemaCode}": ${notChecked(budget)}`} : ${data}.length > ${params.maxLength} ? ${str`is longer than ${params.maxLength} characters, the most pattern "${schemaCode}" is checked against`} : ${str`must match pattern "${schemaCode}"`}`,
      params: ({ schemaCode }) => _`{pattern: ${schemaCode}}`,
    },
    code(cxt: KeywordCxt) {
      const { gen, data, schema } = cxt;
      const source = schema as string;
      const pattern = patterns(source);
      const regExp = gen.scopeValue('pattern', { key: source, ref: pattern });
      cxt.setParams({ regExp, maxLength: pattern.maxLength });
      cxt.fail(_`!${regExp}.test(${data})`);
    },
  };
}

/**
 * ajv's `patternProperties`, failing too for a property name that was not checked against one of
 * the patterns (too long, out of budget), which ajv's own code would take for a name matching none.
 */
function patternPropertiesKeyword(
  original: CodeKeywordDefinition,
  patterns: (source: string) => BudgetedPattern,
  budget: number,
): CodeKeywordDefinition {
  return {
    keyword: 'patternProperties',
    type: 'object',
    schemaType: 'object',
    error: {
      message: ({ params }) =>
        params.reason === 'budget'
          ? str`has property names not checked against pattern "${params.pattern}": ${notChecked(budget)}`
          : str`has a property name longer than ${params.maxLength} characters, the most pattern "${params.pattern}" is checked against`,
      params: ({ params }) => _`{pattern: ${params.pattern}}`,
    },
    code(cxt: KeywordCxt, ruleType) {
      const { gen, data, schema } = cxt;
      const sources = Object.keys(schema as object);
      const skipsBefore = sources.map((source) => {
        const pattern = patterns(source);
        const { maxLength } = pattern;
        gen.forIn('key', data, (key) =>
          gen.if(_`${key}.length > ${maxLength}`, () => {
            cxt.setParams({ pattern: source, maxLength, reason: 'length' });
            cxt.error();
          }),
        );
        const regExp = gen.scopeValue('pattern', { key: source, ref: pattern });
        return { source, regExp, skips: gen.const('skips', _`${regExp}.skips`) };
      });
      original.code(cxt, ruleType);
      for (const { source, regExp, skips } of skipsBefore) {
        gen.if(_`${regExp}.skips > ${skips}`, () => {
          cxt.setParams({ pattern: source, reason: 'budget' });
          cxt.error();
        });
      }
    },
  };
}

const isRefusalError = (error: ErrorObject): boolean =>
  (error.keyword === 'pattern' || error.keyword === 'patternProperties') &&
  /^(was not checked|is longer than|has property names not checked|has a property name longer)/.test(
    error.message ?? '',
  );

/**
 * The validator of a top-level call: it renews the work budget on entry (so one validation, of one
 * organization, cannot spend another's), and fails when any string went unchecked against a
 * pattern, wherever the pattern sat: under `not`, `if` or `oneOf` a failed pattern would pass.
 */
function budgetedValidator<T>(validate: ValidateFunction<T>, state: PatternState): ValidateFunction<T> {
  if ((validate as { $async?: boolean }).$async) throw new Error('$async schemas are not supported');
  const wrapped = ((data: unknown, dataCxt?: DataValidationCxt) => {
    state.startValidation();
    const valid = validate(data, dataCxt);
    wrapped.errors = validate.errors;
    if (state.refused.size === 0) return valid;
    const errors = valid ? [] : [...(validate.errors ?? [])];
    for (const [source, reason] of state.refused) {
      if (errors.some((error) => isRefusalError(error) && (error.params as { pattern?: string }).pattern === source)) {
        continue;
      }
      const why =
        reason === 'budget'
          ? notChecked(state.budget)
          : 'it is longer than the most characters this pattern is checked against';
      errors.push({
        instancePath: '',
        schemaPath: '#',
        keyword: 'pattern',
        params: { pattern: source },
        message: `has a string that was not checked against pattern "${source}": ${why}`,
      });
    }
    wrapped.errors = errors;
    return false;
  }) as ValidateFunction<T>;
  return Object.assign(wrapped, {
    schema: validate.schema,
    schemaEnv: validate.schemaEnv,
    source: validate.source,
    errors: null,
  });
}

/**
 * Ajv for users' schemas; `patternWorkBudget` bounds the pattern checks of one validation (tests
 * change it). Its compile() refuses a schema naming more than {@link MAX_SCHEMA_PATTERNS} distinct
 * patterns or {@link MAX_SCHEMA_PATTERN_CHARACTERS} pattern characters, and returns validators that
 * renew the budget on each call and fail when a string was not checked (see budgetedValidator).
 * Validate through those validators only (not getSchema or validate with a key).
 */
export function tenantSchemaAjv(options: { patternWorkBudget?: number } = {}): Ajv {
  const state = new PatternState(options.patternWorkBudget ?? PATTERN_WORK_BUDGET);
  const regExp = Object.assign((source: string) => state.pattern(source), { code: 'budgetedPatterns' });
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false, code: { regExp } }));
  const patternProperties = ajv.getKeyword('patternProperties') as CodeKeywordDefinition;
  ajv.removeKeyword('pattern').removeKeyword('patternProperties');
  ajv.addKeyword(patternKeyword(regExp, state.budget));
  ajv.addKeyword(patternPropertiesKeyword(patternProperties, regExp, state.budget));
  const compile = ajv.compile.bind(ajv) as (schema: AnySchema, meta?: boolean) => ValidateFunction;
  ajv.compile = ((schema: AnySchema, meta?: boolean) => {
    state.startCompile();
    return budgetedValidator(compile(schema, meta), state);
  }) as Ajv['compile'];
  return ajv;
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
