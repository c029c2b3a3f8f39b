import { createRequire } from 'node:module';

/** pg's own conversion of a parameter to the text it sends (Dates in local time, arrays as `{...}`, objects as JSON). */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as {
  prepareValue: (value: unknown) => string | Buffer | null;
};

/**
 * `sql` with each `$n` replaced by its value written as a literal, for a statement sent in one
 * simple-protocol message with others. Each value becomes the text pg would have sent for it,
 * quoted as an escape string (`E'...'`, the same whatever standard_conforming_strings says); a
 * quoted literal is of unknown type until its context types it, as a parameter is, so the
 * statement means the same. Undefined when a value cannot be written so: binary (Buffer), or text
 * holding NUL (the message is a C string: it would end there; as a parameter PostgreSQL refuses
 * it, and the caller should send it as one to get that error).
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string | undefined {
  const literals: string[] = [];
  for (const parameter of parameters) {
    const text = prepareValue(parameter);
    if (text === null) {
      literals.push('NULL');
      continue;
    }
    if (typeof text !== 'string' || text.includes('\u0000')) return undefined;
    literals.push(`E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`);
  }
  // Quoted text, quoted names and comments are skipped whole: a `$1` there is not a parameter.
  const special = /['"$]|--|\/\*/g;
  let out = '';
  let copied = 0;
  for (let match = special.exec(sql); match; match = special.exec(sql)) {
    const at = match.index;
    const skipTo = endOfQuotedOrComment(sql, at);
    if (skipTo > at) {
      special.lastIndex = skipTo;
      continue;
    }
    const placeholder = /^\$([0-9]+)/.exec(sql.slice(at, at + 12));
    if (!placeholder) continue;
    const literal = literals[Number(placeholder[1]) - 1];
    if (literal === undefined) throw new Error(`no value for ${placeholder[0]}`);
    out += sql.slice(copied, at) + literal;
    copied = special.lastIndex = at + placeholder[0].length;
  }
  return out + sql.slice(copied);
}

/** Where the quoted string, quoted name, dollar-quoted string or comment starting at `at` ends; `at` when none starts there. */
function endOfQuotedOrComment(sql: string, at: number): number {
  const char = sql[at];
  const next = sql[at + 1];
  if (char === "'" || char === '"') {
    // A doubled quote stays inside; E'' strings written by kysely's templates do not occur here.
    let end = at + 1;
    for (;;) {
      const close = sql.indexOf(char, end);
      if (close === -1) return sql.length;
      if (sql[close + 1] !== char) return close + 1;
      end = close + 2;
    }
  }
  if (char === '-' && next === '-') {
    const newline = sql.indexOf('\n', at);
    return newline === -1 ? sql.length : newline + 1;
  }
  if (char === '/' && next === '*') {
    const close = sql.indexOf('*/', at + 2);
    return close === -1 ? sql.length : close + 2;
  }
  if (char === '$') {
    const tag = /^\$[A-Za-z_][A-Za-z0-9_]*\$|^\$\$/.exec(sql.slice(at, at + 64))?.[0];
    if (!tag) return at;
    const close = sql.indexOf(tag, at + tag.length);
    return close === -1 ? sql.length : close + tag.length;
  }
  return at;
}
