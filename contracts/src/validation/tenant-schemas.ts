import { _, Ajv, str, type CodeKeywordDefinition, type KeywordCxt } from 'ajv';
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
 * fewer for a large pattern), so one check takes some tens of milliseconds at worst; and the
 * checks of one validation (one synchronous run) may cover {@link PATTERN_WORK_BUDGET} characters
 * × instructions in all. A string not checked fails validation saying why. The budgets count
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
 * Characters × instructions the pattern checks of one synchronous run of validation may cover
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
  return { source: pattern, programSize, maxLength, test: (text) => text.length <= maxLength && re.test(text) };
}

/** A pattern as the validation code holds it (ajv's `code.regExp`), sharing its validator's work budget. */
interface BudgetedPattern {
  readonly maxLength: number;
  test(text: string): boolean;
  toString(): string;
  /** Whether the last test() was refused for want of budget. */
  skipped: boolean;
  /** How many test() calls were refused for want of budget, ever. */
  skips: number;
}

/**
 * Compiles patterns whose checks share one work budget, renewed once the current synchronous run
 * ends. The last {@link MEMO_SIZE} patterns are kept: a schema names each several times.
 */
function budgetedPatterns(budget: number): (pattern: string) => BudgetedPattern {
  let spent = 0;
  let renewal = false;
  const memo = new Map<string, BudgetedPattern>();
  const compile = (source: string): BudgetedPattern => {
    const compiled = compileTenantPattern(source);
    const pattern: BudgetedPattern = {
      maxLength: compiled.maxLength,
      skipped: false,
      skips: 0,
      toString: () => source,
      test(text) {
        pattern.skipped = false;
        if (text.length > compiled.maxLength) return false;
        const work = text.length * workPerCharacter(compiled.programSize);
        if (spent + work > budget) {
          pattern.skipped = true;
          pattern.skips += 1;
          return false;
        }
        spent += work;
        if (!renewal) {
          renewal = true;
          queueMicrotask(() => {
            spent = 0;
            renewal = false;
          });
        }
        return compiled.test(text);
      },
    };
    return pattern;
  };
  return (source) => {
    let pattern = memo.get(source);
    if (!pattern) {
      pattern = compile(source);
      if (memo.size >= MEMO_SIZE) memo.delete(memo.keys().next().value as string);
      memo.set(source, pattern);
    }
    return pattern;
  };
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

/** Ajv for users' schemas; `patternWorkBudget` bounds the pattern checks of one validation (tests change it). */
export function tenantSchemaAjv(options: { patternWorkBudget?: number } = {}): Ajv {
  const budget = options.patternWorkBudget ?? PATTERN_WORK_BUDGET;
  const patterns = budgetedPatterns(budget);
  const regExp = Object.assign((source: string) => patterns(source), { code: 'budgetedPatterns' });
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false, code: { regExp } }));
  const patternProperties = ajv.getKeyword('patternProperties') as CodeKeywordDefinition;
  ajv.removeKeyword('pattern').removeKeyword('patternProperties');
  ajv.addKeyword(patternKeyword(regExp, budget));
  ajv.addKeyword(patternPropertiesKeyword(patternProperties, regExp, budget));
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
