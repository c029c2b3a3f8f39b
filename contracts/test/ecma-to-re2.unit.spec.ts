import { RE2JS } from 're2js';
import { ecmaPatternToRe2, UnsupportedPatternError } from '../src/validation/ecma-to-re2.js';

const refusal = (pattern: string): string => {
  try {
    ecmaPatternToRe2(pattern);
  } catch (error) {
    expect(error).toBeInstanceOf(UnsupportedPatternError);
    return (error as Error).message;
  }
  throw new Error(`${pattern} was translated`);
};

/** Strings to tell the patterns below apart: line terminators, Unicode spaces, astral characters. */
const SAMPLES = [
  '',
  'a',
  'A',
  'ab',
  'a-b',
  'a\nb',
  'a\rb',
  'a\u2028b',
  'a\u2029b',
  '\t',
  ' ',
  '\u00a0',
  '\u3000',
  '\ufeff',
  '\u200b',
  '\n',
  '\r',
  '\u000b',
  '\u0008',
  '\u0000',
  'x',
  '{',
  '{a}',
  'a{2}',
  'aa',
  '[',
  ']',
  '-',
  'αβγ',
  'Ω',
  'Я',
  'k',
  'K',
  '\u212a',
  '😀',
  '😀😀',
  '\ud83d',
  'ab12',
  '2024-01-31',
];

/** The ECMAScript pattern and its translation agree on every sample. */
const expectSameMatches = (pattern: string) => {
  const ecma = new RegExp(pattern, 'u');
  const re2 = RE2JS.compile(ecmaPatternToRe2(pattern));
  // tenant-schemas checks with matcher().find(); test() is re2js's DFA: both must agree with JavaScript.
  const disagreements = SAMPLES.filter(
    (sample) => ecma.test(sample) !== re2.test(sample) || ecma.test(sample) !== re2.matcher(sample).find(),
  );
  expect({ pattern, disagreements }).toEqual({ pattern, disagreements: [] });
};

describe('ECMAScript patterns rewritten for RE2', () => {
  test('\\uXXXX, \\u{X…} and surrogate pairs become \\x{…}, inside and outside classes; \\\\u stays literal', () => {
    expect(ecmaPatternToRe2('\\u0041')).toBe('\\x{41}');
    expect(ecmaPatternToRe2('[\\u0041-\\u005A]')).toBe('[\\x{41}-\\x{5A}]');
    expect(ecmaPatternToRe2('\\uD83D\\uDE00')).toBe('\\x{1F600}');
    expect(ecmaPatternToRe2('\\u{1F600}')).toBe('\\x{1F600}');
    expect(ecmaPatternToRe2('\\\\u0041')).toBe('\\\\u0041');
    expect(ecmaPatternToRe2('\\\\\\u0041')).toBe('\\\\\\x{41}');
    for (const pattern of ['^\\u0041$', '^[\\u0041-\\u005A]$', '^\\uD83D\\uDE00$', '^\\u{1F600}+$', '^\\\\u0041$']) {
      expectSameMatches(pattern);
    }
    expect(refusal('\\u12')).toBe('invalid escape \\u12');
    expect(refusal('\\u{110000}')).toBe('invalid escape \\u{110000}');
  });

  test('[^] matches anything and [] nothing', () => {
    expect(ecmaPatternToRe2('[^]')).toBe('[\\x{0}-\\x{10FFFF}]');
    expect(ecmaPatternToRe2('a[]')).toBe('a[^\\x{0}-\\x{10FFFF}]');
    for (const pattern of ['^[^]$', '^a[^]b$', 'a[]', '[]|b']) expectSameMatches(pattern);
  });

  test('\\cX, \\0, \\xHH and \\b in a class are the characters they name', () => {
    expect(ecmaPatternToRe2('\\cJ')).toBe('\\x{A}');
    expect(ecmaPatternToRe2('[\\cj]')).toBe('[\\x{A}]');
    expect(ecmaPatternToRe2('\\0')).toBe('\\x{0}');
    expect(ecmaPatternToRe2('[\\b]')).toBe('[\\x{8}]');
    for (const pattern of ['^a\\cJb$', '[\\cM]', '^\\0$', '^\\x41$', '^[\\b]$', '\\bab\\b']) expectSameMatches(pattern);
    expect(refusal('\\c1')).toBe('invalid escape \\c1');
    expect(refusal('\\01')).toBe('invalid escape \\01 (octal escapes are not allowed)');
  });

  test('. leaves out \\r, U+2028 and U+2029 as well as \\n; (?s:…) lets it match them', () => {
    expect(ecmaPatternToRe2('a.b')).toBe('a[^\\n\\r\\x{2028}\\x{2029}]b');
    expect(ecmaPatternToRe2('[.]')).toBe('[.]');
    expect(ecmaPatternToRe2('\\.')).toBe('\\.');
    for (const pattern of ['^a.b$', '^.+$', '^(?s:a.b)$', '^(?s:a)..$', '^[.]$', '^a\\.b$']) expectSameMatches(pattern);
  });

  test('\\s and \\S are the Unicode sets of ECMAScript, outside and inside classes', () => {
    for (const pattern of ['^\\s$', '^\\S+$', '^[\\s]$', '^[^\\s]+$', '^[\\S]+$', '^[^\\S]$', '^[\\sa]+$']) {
      expectSameMatches(pattern);
    }
  });

  test('\\p{…}: Script and its short names, General_Category, long names; refused when RE2 has no equivalent', () => {
    expect(ecmaPatternToRe2('\\p{Script=Greek}')).toBe('\\p{Greek}');
    expect(ecmaPatternToRe2('\\p{sc=Grek}')).toBe('\\p{Greek}');
    expect(ecmaPatternToRe2('\\P{sc=Cyrl}')).toBe('\\P{Cyrillic}');
    expect(ecmaPatternToRe2('[\\p{Script=Thai}\\d]')).toBe('[\\p{Thai}\\d]');
    expect(ecmaPatternToRe2('\\p{General_Category=Letter}')).toBe('\\p{L}');
    expect(ecmaPatternToRe2('\\p{gc=Lu}')).toBe('\\p{Lu}');
    expect(ecmaPatternToRe2('\\p{Uppercase_Letter}')).toBe('\\p{Lu}');
    expect(ecmaPatternToRe2('\\p{ASCII}')).toBe('\\p{Ascii}');
    expect(ecmaPatternToRe2('\\p{Alpha}')).toBe('\\p{Alphabetic}');
    expect(ecmaPatternToRe2('\\p{Greek}')).toBe('\\p{Greek}'); // RE2's own spelling, as before.
    for (const pattern of [
      '^\\p{Script=Greek}+$',
      '^\\p{sc=Grek}+$',
      '^\\P{Script=Latin}+$',
      '^\\p{sc=Zyyy}+$',
      '^\\p{Letter}+$',
      '^[\\p{Lu}\\d]+$',
      '^\\p{ASCII}+$',
      '^\\p{Cn}$',
      '^\\p{White_Space}$',
      '^(?i:\\p{Lu})$',
    ]) {
      expectSameMatches(pattern);
    }
    expect(refusal('\\p{Script_Extensions=Greek}')).toBe(
      '\\p{Script_Extensions=Greek} is not supported: RE2 has no Script_Extensions; \\p{Script=Greek} matches the characters of that script alone',
    );
    expect(refusal('\\p{scx=Grek}')).toMatch(/^\\p\{scx=Grek\} is not supported: RE2 has no Script_Extensions/);
    expect(refusal('\\p{sc=Xxxx}')).toBe('\\p{sc=Xxxx} names no script RE2 knows');
    expect(refusal('\\p{gc=Greek}')).toBe('\\p{gc=Greek} names no general category');
    expect(refusal('\\p{ID_Start}')).toMatch(
      /^\\p\{ID_Start\} is not supported: RE2 knows general categories, scripts and the properties Any, ASCII, /,
    );
    expect(refusal('\\pL')).toBe('invalid escape \\pL: write \\p{…}');
    expect(refusal('\\p{toString}')).toMatch(/^\\p\{toString\} is not supported: RE2 knows/);
    expect(refusal('\\p{gc=constructor}')).toBe('\\p{gc=constructor} names no general category');
  });

  test('under (?i:…), \\P{…}, negated classes with \\p{…} and \\b are refused: JavaScript and RE2 fold case differently', () => {
    expect(refusal('(?i:\\P{Lu})')).toBe(
      '\\P{Lu} is not supported in a case-insensitive group (?i:…): JavaScript negates before ignoring case, RE2 after, and they match different characters',
    );
    expect(refusal('(?i:[^\\p{Lu}])')).toMatch(
      /^a negated class with \\p\{Lu\} is not supported in a case-insensitive group/,
    );
    expect(refusal('(?i:[^a\\P{Ll}])')).toMatch(/^\\P\{Ll\} is not supported in a case-insensitive group/);
    expect(refusal('(?i:a\\b)')).toMatch(/^\\b is not supported in a case-insensitive group \(\?i:…\): .*Kelvin/);
    expect(refusal('(?i:(a)\\B)')).toMatch(/^\\B is not supported in a case-insensitive group/);
    // Outside the group, and \p{…} in a class that is not negated, are as before.
    for (const pattern of [
      '^(?i:a)\\b',
      '^\\P{Lu}$',
      '^[^\\p{Lu}]$',
      '^(?i:[\\p{Lu}])$',
      '^(?i:a(?-i:\\b))',
      '(?i:[\\b])',
    ]) {
      expectSameMatches(pattern);
    }
  });

  test('backreferences and lookaround are refused with the reason', () => {
    expect(refusal('(a)\\1')).toBe('backreferences (\\1) are not supported: RE2 matches in linear time and has none');
    expect(refusal('(?<x>a)\\k<x>')).toBe(
      'backreferences (\\k<x>) are not supported: RE2 matches in linear time and has none',
    );
    expect(refusal('a(?=b)')).toBe('lookahead (?=…) is not supported: RE2 matches in linear time and has none');
    expect(refusal('a(?!b)')).toBe('lookahead (?!…) is not supported: RE2 matches in linear time and has none');
    expect(refusal('(?<=a)b')).toBe('lookbehind (?<=…) is not supported: RE2 matches in linear time and has none');
    expect(refusal('(?<!a)b')).toBe('lookbehind (?<!…) is not supported: RE2 matches in linear time and has none');
  });

  test('groups: named groups, (?i:…), and RE2-only or unlike syntax refused', () => {
    expect(ecmaPatternToRe2('(?<year>\\d{4})')).toBe('(\\d{4})');
    expect(ecmaPatternToRe2('(?i:ab)c')).toBe('(?i:ab)c');
    for (const pattern of ['^(?<year>\\d{4})-\\d{2}$', '^(?i:ab)c$', '^(?i:a(?-i:b))$', '^(?:a|b)+$', '^(a)|b$']) {
      expectSameMatches(pattern);
    }
    expect(refusal('(?i)a')).toBe('inline flags (?i) are not JavaScript syntax: write (?i:…)');
    expect(refusal('(?P<n>a)')).toBe('(?P<name>…) is not JavaScript syntax: write (?<name>…)');
    expect(refusal('(?m:^a)')).toMatch(/^\(\?m:…\) is not supported: its \^ and \$ would match at \\r/);
    expect(refusal('(?x:a)')).toBe('unsupported flag x in (?x:');
    expect(refusal('\\z')).toBe('invalid escape \\z');
    expect(refusal('\\Qa\\E')).toBe('invalid escape \\Q');
    expect(refusal('a\\')).toBe('a pattern cannot end with a lone backslash');
  });

  test('counted repeats: counts up to 100, leading zeros read as JavaScript does; other braces are literal', () => {
    expect(ecmaPatternToRe2('a{2,100}')).toBe('a{2,100}');
    expect(ecmaPatternToRe2('a{01}')).toBe('a{1}');
    expect(ecmaPatternToRe2('a{,5}')).toBe('a\\{,5\\}');
    expect(ecmaPatternToRe2('[{101}]')).toBe('[{101}]');
    expect(ecmaPatternToRe2('\\{101}')).toBe('\\{101\\}');
    expect(ecmaPatternToRe2('[[:alpha:]]')).toBe('[\\[:alpha:]\\]');
    for (const pattern of ['^a{2}$', '^a{01}$', '^a{1,}$', '^[{101}]$', '^[[a]+$', '^a\\{2\\}$'])
      expectSameMatches(pattern);
    expect(refusal('a{101}')).toBe('repeat count {101} is more than 100, the largest allowed');
    expect(refusal('a{2,101}')).toBe('repeat count {2,101} is more than 100, the largest allowed');
    expect(refusal('a{101,}')).toBe('repeat count {101,} is more than 100, the largest allowed');
  });
});
