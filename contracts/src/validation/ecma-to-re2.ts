import { SCRIPT_ALIASES, SCRIPT_NAMES } from './unicode-script-aliases.js';

/**
 * JSON Schema `pattern`s are ECMA-262 regular expressions (ajv compiles them with the `u` flag);
 * users' patterns run on RE2 (re2js), whose syntax and semantics differ in places. This rewrites
 * an ECMAScript pattern into the RE2 pattern that matches the same strings, and refuses, with the
 * reason, what RE2 cannot run (backreferences, lookaround) or runs differently with no rewrite.
 *
 * Rewritten: `.` (ECMAScript's excludes \r, U+2028 and U+2029 too), `\s` and `\S` (ECMAScript's
 * include Unicode spaces, RE2's are ASCII), `\uXXXX` (surrogate pairs joined), `\u{X…}`, `\cX`,
 * `\0`, `\xHH`, `[^]` and `[]`, `\b` in a class (backspace), `[` in a class (RE2 would read
 * `[:alpha:]` as a POSIX class), `\p{Script=…}`, `\p{sc=…}`, `\p{General_Category=…}`, long
 * category and property names (`\p{Letter}`), `(?<name>…)`, `{01}`-style counts, the `(?s:…)`
 * modifier, and a `{` or `}` that starts no count (a literal, as JavaScript reads it without `u`).
 * Refused: backreferences (`\1`, `\k<name>`), lookahead and lookbehind, `\p{Script_Extensions=…}`
 * and properties RE2 lacks, the `(?m:…)` modifier (RE2's line anchors know only \n), RE2-only
 * syntax that JavaScript rejects (`(?i)`, `(?P<n>…)`, `\z`, `\Q…\E`, `\pL`), counted repeats
 * over {@link MAX_REPEAT_COUNT}, and, inside `(?i:…)`, `\P{…}`, negated classes with `\p{…}` and
 * `\b`/`\B`: JavaScript negates before ignoring case, RE2 after, and they disagree on ſ and the
 * Kelvin sign as word characters.
 */

/** The largest count a `{n}`, `{n,}` or `{n,m}` may have: RE2's time per character grows with it. */
export const MAX_REPEAT_COUNT = 100;

/** A pattern RE2 cannot run as ECMAScript would; the message says why. */
export class UnsupportedPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedPatternError';
  }
}

const hex = (codePoint: number): string => `\\x{${codePoint.toString(16).toUpperCase()}}`;

/** ECMAScript's WhiteSpace and LineTerminator code points (what `\s` matches), as ranges. */
const SPACE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const classBody = (ranges: ReadonlyArray<readonly [number, number]>): string =>
  ranges.map(([lo, hi]) => (lo === hi ? hex(lo) : `${hex(lo)}-${hex(hi)}`)).join('');
const complement = (ranges: ReadonlyArray<readonly [number, number]>): Array<[number, number]> => {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
};
/** `\s` and `\S` as the inside of an RE2 class. */
const SPACE = classBody(SPACE_RANGES);
const NOT_SPACE = classBody(complement(SPACE_RANGES));
const ANY = `[${hex(0)}-${hex(0x10ffff)}]`;
const NOTHING = `[^${hex(0)}-${hex(0x10ffff)}]`;
/** ECMAScript's `.`: anything but a line terminator. */
const DOT = `[^\\n\\r${hex(0x2028)}${hex(0x2029)}]`;

/** General_Category values by their long names and aliases (PropertyValueAliases.txt). */
const CATEGORY_ALIASES: Readonly<Record<string, string>> = {
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Unassigned: 'Cn',
  Private_Use: 'Co',
  Surrogate: 'Cs',
  Letter: 'L',
  Cased_Letter: 'LC',
  Lowercase_Letter: 'Ll',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Titlecase_Letter: 'Lt',
  Uppercase_Letter: 'Lu',
  Mark: 'M',
  Combining_Mark: 'M',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Nonspacing_Mark: 'Mn',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Close_Punctuation: 'Pe',
  Final_Punctuation: 'Pf',
  Initial_Punctuation: 'Pi',
  Other_Punctuation: 'Po',
  Open_Punctuation: 'Ps',
  Symbol: 'S',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Math_Symbol: 'Sm',
  Other_Symbol: 'So',
  Separator: 'Z',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Space_Separator: 'Zs',
};
const CATEGORIES = new Set(Object.values(CATEGORY_ALIASES));
/** Binary properties RE2 has, by their ECMAScript names and aliases. */
const BINARY_PROPERTIES: Readonly<Record<string, string>> = {
  Any: 'Any',
  ASCII: 'Ascii',
  Assigned: 'Assigned',
  ASCII_Hex_Digit: 'ASCII_Hex_Digit',
  AHex: 'ASCII_Hex_Digit',
  Alphabetic: 'Alphabetic',
  Alpha: 'Alphabetic',
  Dash: 'Dash',
  Emoji: 'Emoji',
  Emoji_Component: 'Emoji_Component',
  EComp: 'Emoji_Component',
  Emoji_Modifier: 'Emoji_Modifier',
  EMod: 'Emoji_Modifier',
  Emoji_Modifier_Base: 'Emoji_Modifier_Base',
  EBase: 'Emoji_Modifier_Base',
  Emoji_Presentation: 'Emoji_Presentation',
  EPres: 'Emoji_Presentation',
  Extended_Pictographic: 'Extended_Pictographic',
  ExtPict: 'Extended_Pictographic',
  Hex_Digit: 'Hex_Digit',
  Hex: 'Hex_Digit',
  Lowercase: 'Lowercase',
  Lower: 'Lowercase',
  Math: 'Math',
  Quotation_Mark: 'Quotation_Mark',
  QMark: 'Quotation_Mark',
  Terminal_Punctuation: 'Terminal_Punctuation',
  Term: 'Terminal_Punctuation',
  Uppercase: 'Uppercase',
  Upper: 'Uppercase',
  White_Space: 'White_Space',
  WSpace: 'White_Space',
  space: 'White_Space',
};

/** RE2's name for the property in `\p{body}`. */
function propertyName(body: string): string {
  const escape = `\\p{${body}}`;
  const equals = body.indexOf('=');
  if (equals >= 0) {
    const key = body.slice(0, equals);
    const value = body.slice(equals + 1);
    if (key === 'General_Category' || key === 'gc') {
      const category = CATEGORIES.has(value)
        ? value
        : Object.hasOwn(CATEGORY_ALIASES, value)
          ? CATEGORY_ALIASES[value]
          : undefined;
      if (category) return category;
      throw new UnsupportedPatternError(`${escape} names no general category`);
    }
    if (key === 'Script' || key === 'sc') {
      const script = Object.hasOwn(SCRIPT_ALIASES, value) ? SCRIPT_ALIASES[value]! : value;
      if (SCRIPT_NAMES.has(script)) return script;
      throw new UnsupportedPatternError(`${escape} names no script RE2 knows`);
    }
    if (key === 'Script_Extensions' || key === 'scx') {
      throw new UnsupportedPatternError(
        `${escape} is not supported: RE2 has no Script_Extensions; \\p{Script=${value}} matches the characters of that script alone`,
      );
    }
    throw new UnsupportedPatternError(`${escape} is not supported: only General_Category and Script take a value`);
  }
  if (CATEGORIES.has(body)) return body;
  const name = Object.hasOwn(CATEGORY_ALIASES, body)
    ? CATEGORY_ALIASES[body]
    : Object.hasOwn(BINARY_PROPERTIES, body)
      ? BINARY_PROPERTIES[body]
      : undefined;
  if (name) return name;
  // RE2's own spelling of a script (`\p{Greek}`) is accepted as it was before translation.
  if (SCRIPT_NAMES.has(body)) return body;
  throw new UnsupportedPatternError(
    `${escape} is not supported: RE2 knows general categories, scripts and the properties ${Object.keys(
      BINARY_PROPERTIES,
    )
      .filter((key) => BINARY_PROPERTIES[key] === key || key === 'ASCII')
      .join(', ')}`,
  );
}

const isHex = (text: string): boolean => /^[0-9A-Fa-f]+$/.test(text);
const isDigit = (char: string | undefined): boolean => char !== undefined && char >= '0' && char <= '9';
const SYNTAX_CHARACTERS = new Set('^$\\.*+?()[]{}|/');
/** A counted repeat, `{n}`, `{n,}` or `{n,m}`, at lastIndex. */
const COUNT = /\{(\d+)(,(\d*))?\}/y;

/**
 * The RE2 pattern matching what the ECMAScript (`u` flag) pattern matches.
 * @throws UnsupportedPatternError with the reason when there is none.
 */
export function ecmaPatternToRe2(pattern: string): string {
  const out: string[] = [];
  let i = 0;
  let inClass = false;
  let negatedClass = false;
  let dotAll = false;
  /** Whether case is ignored here, in a (?i:…) group. */
  let caseless = false;
  /** dotAll and caseless outside each open group, restored when it closes. */
  const groups: Array<{ dotAll: boolean; caseless: boolean }> = [];

  const refuse = (message: string): never => {
    throw new UnsupportedPatternError(message);
  };

  /** The code point of a `\u` escape at i (`\uXXXX`, a pair of them, or `\u{X…}`); moves i past it. */
  const unicodeEscape = (): number => {
    if (pattern[i + 2] === '{') {
      const close = pattern.indexOf('}', i + 3);
      const digits = close < 0 ? '' : pattern.slice(i + 3, close);
      const value = isHex(digits) ? parseInt(digits, 16) : NaN;
      if (!(value <= 0x10ffff)) refuse(`invalid escape ${pattern.slice(i, close < 0 ? i + 3 : close + 1)}`);
      i = close + 1;
      return value;
    }
    const digits = pattern.slice(i + 2, i + 6);
    if (digits.length !== 4 || !isHex(digits)) refuse(`invalid escape ${pattern.slice(i, i + 6)}`);
    let value = parseInt(digits, 16);
    i += 6;
    const low = pattern.slice(i + 2, i + 6);
    if (value >= 0xd800 && value <= 0xdbff && pattern.startsWith('\\u', i) && low.length === 4 && isHex(low)) {
      const lowValue = parseInt(low, 16);
      if (lowValue >= 0xdc00 && lowValue <= 0xdfff) {
        value = 0x10000 + ((value - 0xd800) << 10) + (lowValue - 0xdc00);
        i += 6;
      }
    }
    return value;
  };

  /** The escape at i (a backslash), rewritten for RE2; moves i past it. */
  const escape = (): string => {
    const char = pattern[i + 1];
    if (char === undefined) return refuse('a pattern cannot end with a lone backslash');
    const simple = (text: string): string => {
      i += 2;
      return text;
    };
    switch (char) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 't':
      case 'n':
      case 'r':
      case 'f':
      case 'v':
        return simple(`\\${char}`);
      case 's':
        return simple(inClass ? SPACE : `[${SPACE}]`);
      case 'S':
        return simple(inClass ? NOT_SPACE : `[^${SPACE}]`);
      case 'b':
      case 'B':
        if (inClass) return char === 'b' ? simple(hex(8)) : refuse('\\B is not allowed inside a character class');
        if (caseless) {
          refuse(
            `\\${char} is not supported in a case-insensitive group (?i:…): JavaScript and RE2 tell word characters apart differently there (ſ, the Kelvin sign)`,
          );
        }
        return simple(`\\${char}`);
      case '0':
        if (isDigit(pattern[i + 2]))
          refuse(`invalid escape ${pattern.slice(i, i + 3)} (octal escapes are not allowed)`);
        return simple(hex(0));
      case 'k':
        return refuse(
          `backreferences (${pattern.slice(i, pattern.indexOf('>', i) + 1 || i + 2)}) are not supported: RE2 matches in linear time and has none`,
        );
      case 'c': {
        const letter = pattern[i + 2];
        if (letter === undefined || !/[A-Za-z]/.test(letter)) refuse(`invalid escape ${pattern.slice(i, i + 3)}`);
        i += 3;
        return hex(letter!.charCodeAt(0) % 32);
      }
      case 'x': {
        const digits = pattern.slice(i + 2, i + 4);
        if (digits.length !== 2 || !isHex(digits)) refuse(`invalid escape ${pattern.slice(i, i + 4)}`);
        i += 4;
        return hex(parseInt(digits, 16));
      }
      case 'u':
        return hex(unicodeEscape());
      case 'p':
      case 'P': {
        const close = pattern.indexOf('}', i + 3);
        if (pattern[i + 2] !== '{' || close < 0) {
          return refuse(`invalid escape ${pattern.slice(i, i + 3)}: write \\${char}{…}`);
        }
        const name = propertyName(pattern.slice(i + 3, close));
        if (caseless && (char === 'P' || (inClass && negatedClass))) {
          refuse(
            `${char === 'P' ? pattern.slice(i, close + 1) : `a negated class with ${pattern.slice(i, close + 1)}`} is not supported in a case-insensitive group (?i:…): JavaScript negates before ignoring case, RE2 after, and they match different characters`,
          );
        }
        i = close + 1;
        return `\\${char}{${name}}`;
      }
      default:
        break;
    }
    if (isDigit(char)) {
      let end = i + 1;
      while (isDigit(pattern[end])) end += 1;
      return refuse(
        `backreferences (${pattern.slice(i, end)}) are not supported: RE2 matches in linear time and has none`,
      );
    }
    if (SYNTAX_CHARACTERS.has(char) || char === '-' || (char < '\x80' && !/[A-Za-z0-9]/.test(char))) {
      return simple(`\\${char}`);
    }
    return refuse(`invalid escape \\${char}`);
  };

  /** The `(?…` group opening at i, rewritten for RE2; moves i past it. */
  const group = (): string => {
    const rest = pattern.slice(i + 2);
    if (rest.startsWith('=') || rest.startsWith('!')) {
      refuse(`lookahead ${pattern.slice(i, i + 3)}…) is not supported: RE2 matches in linear time and has none`);
    }
    if (rest.startsWith('<=') || rest.startsWith('<!')) {
      refuse(`lookbehind ${pattern.slice(i, i + 4)}…) is not supported: RE2 matches in linear time and has none`);
    }
    if (rest.startsWith('<')) {
      const close = pattern.indexOf('>', i + 3);
      if (close < 0 || close === i + 3) refuse('invalid group name in (?<…>');
      i = close + 1;
      return '(';
    }
    if (rest.startsWith('P<')) refuse('(?P<name>…) is not JavaScript syntax: write (?<name>…)');
    const modifiers = /^([A-Za-z]*)(?:-([A-Za-z]*))?([:)])/.exec(rest);
    if (!modifiers) return refuse(`unsupported group ${pattern.slice(i, i + 3)}…`);
    const [text, on = '', off = '', end] = modifiers;
    if (end === ')' && on + off === '') refuse('unsupported group (?)');
    if (end === ')') {
      return refuse(
        `inline flags ${pattern.slice(i, i + 2 + text.length)} are not JavaScript syntax: write (?${on}:…)`,
      );
    }
    for (const flag of on + off) {
      if (flag === 'm') {
        refuse('(?m:…) is not supported: its ^ and $ would match at \\r, U+2028 and U+2029 too, which RE2 cannot do');
      }
      if (flag !== 'i' && flag !== 's') refuse(`unsupported flag ${flag} in (?${text}`);
    }
    if (on.includes('s')) dotAll = true;
    if (on.includes('i')) caseless = true;
    if (off.includes('i')) caseless = false;
    if (off.includes('s')) dotAll = false;
    const caseOn = on.includes('i') ? 'i' : '';
    const caseOff = off.includes('i') ? '-i' : '';
    i += 2 + text.length;
    return `(?${caseOn}${caseOff}:`;
  };

  while (i < pattern.length) {
    const char = pattern[i]!;
    if (inClass) {
      if (char === '\\') out.push(escape());
      else {
        if (char === ']') inClass = false;
        out.push(char === '[' ? '\\[' : char);
        i += 1;
      }
      continue;
    }
    switch (char) {
      case '\\':
        out.push(escape());
        break;
      case '[':
        if (pattern.startsWith('[]', i)) {
          out.push(NOTHING);
          i += 2;
        } else if (pattern.startsWith('[^]', i)) {
          out.push(ANY);
          i += 3;
        } else {
          inClass = true;
          const negated = pattern[i + 1] === '^';
          negatedClass = negated;
          out.push(negated ? '[^' : '[');
          i += negated ? 2 : 1;
        }
        break;
      case '.':
        out.push(dotAll ? ANY : DOT);
        i += 1;
        break;
      case '(':
        groups.push({ dotAll, caseless });
        if (pattern[i + 1] === '?') out.push(group());
        else {
          out.push('(');
          i += 1;
        }
        break;
      case ')':
        if (groups.length > 0) ({ dotAll, caseless } = groups.pop()!);
        out.push(')');
        i += 1;
        break;
      case '{': {
        COUNT.lastIndex = i;
        const count = COUNT.exec(pattern);
        if (!count) {
          out.push('\\{');
          i += 1;
          break;
        }
        const [text, min, comma, max] = count;
        for (const bound of [min, max]) {
          if (bound && Number(bound) > MAX_REPEAT_COUNT) {
            refuse(`repeat count ${text} is more than ${MAX_REPEAT_COUNT}, the largest allowed`);
          }
        }
        out.push(`{${Number(min)}${comma ? ',' : ''}${max ? Number(max) : ''}}`);
        i += text.length;
        break;
      }
      case '}':
      case ']':
        out.push(`\\${char}`);
        i += 1;
        break;
      default:
        out.push(char);
        i += 1;
    }
  }
  return out.join('');
}
