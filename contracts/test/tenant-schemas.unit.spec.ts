import { RE2JS } from 're2js';
import {
  checkedLengthLimit,
  compileTenantPattern,
  MAX_CHECKED_LENGTH,
  PATTERN_WORK_BUDGET,
  schemaCompileError,
  tenantSchemaAjv,
} from '../src/validation/tenant-schemas.js';

const messages = (validate: { errors?: Array<{ instancePath: string; message?: string }> | null }) =>
  (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);

describe("users' JSON Schemas", () => {
  test('a catastrophic-backtracking pattern runs in linear time', () => {
    const validate = tenantSchemaAjv().compile({ type: 'string', pattern: '^(a+)+$' });
    // 30,000 characters: a backtracking engine would need longer than the universe has existed.
    expect(validate(`${'a'.repeat(30_000)}!`)).toBe(false);
    expect(validate('aaaa')).toBe(true);
  });

  test('Unicode classes still match; patterns that cannot run in linear time are refused with the cause', () => {
    const letters = tenantSchemaAjv().compile({ type: 'string', pattern: '^\\p{L}+$' });
    expect(letters('héllo')).toBe(true);
    expect(letters('h3llo')).toBe(false);
    expect(schemaCompileError({ type: 'string', pattern: '(a)\\1' })).toBe(
      'pattern "(a)\\1": backreferences (\\1) are not supported: RE2 matches in linear time and has none',
    );
    expect(schemaCompileError({ type: 'string', pattern: '^a(?=b)' })).toMatch(/^pattern "\^a\(\?=b\)": lookahead/);
    expect(schemaCompileError({ type: 'string', pattern: '(?:x' })).toMatch(/^pattern "\(\?:x" does not compile: /);
    expect(schemaCompileError({ type: 'object', patternProperties: { '(?<=a)b': {} } })).toMatch(/lookbehind/);
    expect(schemaCompileError({ type: 'string', pattern: '^[a-z]+$' })).toBeUndefined();
  });

  test('patterns mean what they mean in JavaScript', () => {
    const ajv = tenantSchemaAjv();
    const dot = ajv.compile({ type: 'string', pattern: '^a.b$' });
    expect(dot('a-b')).toBe(true);
    expect(dot('a\rb')).toBe(false);
    const space = ajv.compile({ type: 'string', pattern: '^\\s$' });
    expect(space('\u00a0')).toBe(true);
    const escape = ajv.compile({ type: 'string', pattern: '^\\u0041\\cJ$' });
    expect(escape('A\n')).toBe(true);
    const greek = ajv.compile({ type: 'string', pattern: '^\\p{Script=Greek}+$' });
    expect(greek('αβγ')).toBe(true);
    expect(greek('abc')).toBe(false);
    // Two patterns in one instance keep apart.
    expect(ajv.compile({ type: 'string', pattern: '^b$' })('b')).toBe(true);
  });

  test('a pattern JavaScript rejects with the u flag is refused with its message', () => {
    expect(schemaCompileError({ type: 'string', pattern: ']' })).toBe(
      'pattern "]" does not compile: Invalid regular expression: /]/u: Lone quantifier brackets',
    );
    expect(schemaCompileError({ type: 'string', pattern: 'a{' })).toMatch(/^pattern "a\{" does not compile: Invalid/);
    expect(schemaCompileError({ type: 'string', pattern: '\\#' })).toMatch(/does not compile: .*Invalid escape$/);
    expect(schemaCompileError({ type: 'string', pattern: '\\-' })).toMatch(/does not compile: .*Invalid escape$/);
    expect(schemaCompileError({ type: 'string', pattern: '\\p{toString}' })).toMatch(/Invalid property name$/);
    expect(schemaCompileError({ type: 'string', pattern: '[\\-#]' })).toBeUndefined();
  });

  test('formats are checked as in the contract schemas', () => {
    const email = tenantSchemaAjv().compile({ type: 'string', format: 'email' });
    expect(email('ada@weft.test')).toBe(true);
    expect(email('not an address')).toBe(false);
  });
});

describe('what a pattern may cost', () => {
  test('a pattern longer than 1,000 characters is refused, naming the pattern and the limit', () => {
    expect(schemaCompileError({ type: 'string', pattern: 'a'.repeat(1000) })).toBeUndefined();
    expect(schemaCompileError({ type: 'string', pattern: 'a'.repeat(1001) })).toBe(
      `pattern "${'a'.repeat(80)}…" is 1001 characters long, more than 1000, the most allowed`,
    );
  });

  test('counted repeats over 100 are refused; escaped braces and braces in a class are no repeat', () => {
    expect(schemaCompileError({ type: 'string', pattern: 'a{100}' })).toBeUndefined();
    for (const pattern of ['a{101}', 'a{101,}', 'a{1,101}', 'a{0101}', 'a{99999999999999999999}', 'a[ab]{999}[^ab]']) {
      expect(schemaCompileError({ type: 'string', pattern })).toMatch(
        /^pattern ".*": repeat count \{\d+(,\d*)?\} is more than 100, the largest allowed \(for the length of a string, use minLength and maxLength\)$/,
      );
    }
    const literal = tenantSchemaAjv().compile({ type: 'string', pattern: '^a\\{101\\}[{999}]$' });
    expect(literal('a{101}9')).toBe(true);
    expect(literal('a{101}x')).toBe(false);
  });

  test('a pattern compiling to more than 2,000 RE2 instructions is refused', () => {
    expect(schemaCompileError({ type: 'string', pattern: '(?:[ab]{100}){10}(?:[ab]{100}){9}' })).toBeUndefined();
    expect(schemaCompileError({ type: 'string', pattern: '(?:[ab]{100}){10}(?:[ab]{100}){10}' })).toBe(
      'pattern "(?:[ab]{100}){10}(?:[ab]{100}){10}" is too large: it compiles to 2002 RE2 instructions, more than 2000, the most allowed (fewer or smaller repeats make it smaller)',
    );
  });

  test('the longer the compiled pattern, the shorter the strings it is checked against', () => {
    expect(checkedLengthLimit(5)).toBe(MAX_CHECKED_LENGTH);
    expect(checkedLengthLimit(100)).toBe(2621);
    expect(checkedLengthLimit(2000)).toBe(131);
    expect(compileTenantPattern('^[a-z]+$').maxLength).toBe(32_768);
  });

  test('a string too long to be checked fails saying so', () => {
    const validate = tenantSchemaAjv().compile({
      type: 'object',
      properties: { text: { type: 'string', pattern: '^[a-z ]*$' } },
    });
    expect(validate({ text: 'a'.repeat(32_768) })).toBe(true);
    expect(validate({ text: 'a'.repeat(32_769) })).toBe(false);
    expect(messages(validate)).toEqual([
      '/text is longer than 32768 characters, the most pattern "^[a-z ]*$" is checked against',
    ]);
    expect(validate({ text: 'A' })).toBe(false);
    expect(messages(validate)).toEqual(['/text must match pattern "^[a-z ]*$"']);
  });

  test('a property name too long to be checked against patternProperties fails saying so', () => {
    const validate = tenantSchemaAjv().compile({ type: 'object', patternProperties: { '^x-': { type: 'number' } } });
    const long = `x-${'a'.repeat(32_767)}`;
    expect(validate({ 'x-a': 1 })).toBe(true);
    expect(validate({ 'x-a': 'one' })).toBe(false);
    expect(validate({ [long]: 'one' })).toBe(false);
    expect(messages(validate)).toEqual([
      ' has a property name longer than 32768 characters, the most pattern "^x-" is checked against',
    ]);
  });

  test('once the pattern checks of a validation have used their work budget, later strings fail unchecked', async () => {
    const validate = tenantSchemaAjv({ patternWorkBudget: 0 }).compile({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a$' } },
      patternProperties: { '^x': { type: 'number' } },
    });
    expect(validate({ a: 'a', xy: 'one' })).toBe(false);
    const unchecked =
      'the pattern checks of this validation would cover more than 0 characters × pattern instructions, the most allowed';
    expect(messages(validate)).toEqual([
      `/a was not checked against pattern "^a$": ${unchecked}`,
      ` has property names not checked against pattern "^x": ${unchecked}`,
    ]);

    // A small pattern counts 8 per character: 80 covers two strings of 4 characters, not three.
    const ajv = tenantSchemaAjv({ patternWorkBudget: 80 });
    const limited = ajv.compile({ type: 'array', items: { type: 'string', pattern: '^a' } });
    expect(limited(['aaaa', 'bbbb', 'aaaa'])).toBe(false);
    expect(messages(limited)).toEqual([
      '/1 must match pattern "^a"',
      '/2 was not checked against pattern "^a": the pattern checks of this validation would cover more than 80 characters × pattern instructions, the most allowed',
    ]);
    // Each call has the whole budget again, in the same tick too: it counts work, not time, so the
    // same document gets the same answer on a busy machine as on a quiet one.
    expect(limited(['aaaa', 'bbbb', 'aaaa'])).toBe(false);
    expect(messages(limited)).toHaveLength(2);
    expect(limited(['aaaa', 'aaaa'])).toBe(true);
  });
});

describe('what validation and compilation may cost', () => {
  test('one validation cannot spend the budget of the next, in the same tick (one Ajv serves every organization)', () => {
    const ajv = tenantSchemaAjv({ patternWorkBudget: 80 });
    const greedy = ajv.compile({ type: 'array', items: { type: 'string', pattern: '^a' } });
    const modest = ajv.compile({ type: 'string', pattern: '^b' });
    expect(greedy(Array(20).fill('aaaa'))).toBe(false);
    expect(modest('bbbb')).toBe(true);
  });

  test('an empty string costs a step: a budget of 80 checks ten of them, not eleven', () => {
    const validate = tenantSchemaAjv({ patternWorkBudget: 80 }).compile({
      type: 'array',
      items: { type: 'string', pattern: '^$' },
    });
    expect(validate(Array(10).fill(''))).toBe(true);
    expect(validate(Array(11).fill(''))).toBe(false);
  });

  test('a string not checked fails the validation even under not, if or oneOf', () => {
    const notScript = tenantSchemaAjv().compile({ type: 'string', not: { pattern: '^\\s*javascript:' } });
    expect(notScript('https://weft.test')).toBe(true);
    expect(notScript('javascript:alert(1)')).toBe(false);
    expect(notScript(`javascript:alert(1)//${'x'.repeat(32_768)}`)).toBe(false);
    expect(messages(notScript)).toContain(
      ' has a string that was not checked against pattern "^\\s*javascript:": it is longer than the most characters this pattern is checked against',
    );
    const names = tenantSchemaAjv().compile({ type: 'object', propertyNames: { not: { pattern: '^\\$' } } });
    expect(names({ where: 1 })).toBe(true);
    expect(names({ [`$where${' '.repeat(32_768)}`]: 1 })).toBe(false);
    const condition = tenantSchemaAjv({ patternWorkBudget: 0 }).compile({
      type: 'string',
      if: { pattern: '^admin' },
      then: { const: 'admin-ok' },
    });
    expect(condition('admin-evil')).toBe(false);
    expect(messages(condition)).toEqual([
      ' has a string that was not checked against pattern "^admin": the pattern checks of this validation would cover more than 0 characters × pattern instructions, the most allowed',
    ]);
    const either = tenantSchemaAjv({ patternWorkBudget: 0 }).compile({
      oneOf: [{ type: 'string', pattern: '^a' }, { type: 'string' }],
    });
    expect(either('abc')).toBe(false);
  });

  test('patterns whose classes have many range boundaries check the whole budget in bounded work', () => {
    // re2js's DFA (RE2JS.test) built states for these strings for 2.5-4.4 s; the matcher's search
    // takes ~40 ms here, proportional to characters × instructions.
    const pattern = '(?:[\\p{Cn}\\p{Ll}]\\p{Lu}\\p{Mn}\\p{Lo})|[a\\p{Nd}][ab]{9}\\p{Nd}';
    const { programSize } = compileTenantPattern(pattern);
    const count = Math.floor(PATTERN_WORK_BUDGET / (51 * Math.max(programSize, 8)));
    let seed = 42;
    const bit = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >> 16) & 1;
    const data = Array.from({ length: count }, () => Array.from({ length: 50 }, () => (bit() ? 'a' : 'b')).join(''));
    const dfaTest = RE2JS.prototype.test;
    let dfaCalls = 0;
    RE2JS.prototype.test = function (this: RE2JS, input: string) {
      dfaCalls += 1;
      return dfaTest.call(this, input);
    };
    try {
      const validate = tenantSchemaAjv().compile({ type: 'array', items: { type: 'string', pattern } });
      expect(validate(data)).toBe(false); // most strings do not match: no digit
      expect(validate(['a'.repeat(40) + 'ab1'])).toBe(true);
      const ecma = new RegExp(pattern, 'u');
      const compiled = compileTenantPattern(pattern);
      expect(data.filter((text) => compiled.test(text) !== ecma.test(text))).toEqual([]);
      expect(dfaCalls).toBe(0);
    } finally {
      RE2JS.prototype.test = dfaTest;
    }
  });

  test('a schema may name 200 distinct patterns of 12,000 characters in all; more is refused', () => {
    const schemaOf = (patterns: string[]) => ({
      type: 'object',
      properties: Object.fromEntries(patterns.map((pattern, index) => [`p${index}`, { type: 'string', pattern }])),
    });
    const numbered = (count: number, from = 0) => Array.from({ length: count }, (_, index) => `^x${index + from}$`);
    expect(schemaCompileError(schemaOf(numbered(200)))).toBeUndefined();
    expect(schemaCompileError(schemaOf(numbered(201)))).toBe(
      'the schema has more than 200 distinct patterns, the most allowed',
    );
    // The same pattern named many times counts once.
    expect(schemaCompileError(schemaOf(Array(500).fill('^x$')))).toBeUndefined();
    const long = (count: number) =>
      Array.from({ length: count }, (_, index) => `${'a'.repeat(996)}${String(index).padStart(4, '0')}`);
    expect(schemaCompileError(schemaOf(long(12)))).toBeUndefined();
    expect(schemaCompileError(schemaOf(long(13)))).toBe(
      'the patterns of the schema have more than 12000 characters in all, the most allowed',
    );
    // Patterns compiled before by the same Ajv count for each schema naming them.
    const ajv = tenantSchemaAjv();
    ajv.compile(schemaOf(numbered(150)));
    expect(() => ajv.compile(schemaOf(numbered(51, 150)))).not.toThrow();
    expect(() => ajv.compile(schemaOf([...numbered(150), ...numbered(51, 150)]))).toThrow(
      'the schema has more than 200 distinct patterns, the most allowed',
    );
  });
});
