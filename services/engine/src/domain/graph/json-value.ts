/**
 * Node outputs become event data, stored as JSON next to other executions' events in one group
 * commit: a value JSON cannot hold (BigInt, a cycle) must fail its node, never the commit. So
 * must a string JSON can hold but PostgreSQL's jsonb cannot (U+0000, a lone surrogate).
 */
export class NotJsonError extends Error {
  override name = 'NotJsonError';
}

const isPlainJson = (value: unknown, seen: Set<object>): boolean => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object') return false;
  if (seen.has(value)) return false;
  seen.add(value);
  const plain = Array.isArray(value)
    ? value.every((item) => isPlainJson(item, seen))
    : Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null
      ? Object.values(value).every((item) => isPlainJson(item, seen))
      : false;
  seen.delete(value);
  return plain;
};

/** Why jsonb refuses this string, or undefined when it can hold it. */
export const unstorableReason = (text: string): string | undefined =>
  text.includes('\u0000') ? 'a NUL character' : text.isWellFormed() ? undefined : 'a lone surrogate';

/** The text with what jsonb refuses replaced by U+FFFD (for messages, which may quote user data). */
export const storableText = (text: string): string => text.replaceAll('\u0000', '\ufffd').toWellFormed();

export interface UnstorableString {
  /** JSON pointer of the value (or of the member whose name is at fault). */
  path: string;
  reason: string;
  inKey: boolean;
}

const pointer = (segments: readonly (string | number)[]): string =>
  segments.map((segment) => `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** Whether any string or member name of a JSON value is refused; allocation-free, as every output passes here. */
const holdsUnstorable = (value: unknown): boolean => {
  if (typeof value === 'string') return unstorableReason(value) !== undefined;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (holdsUnstorable(value[i])) return true;
    return false;
  }
  for (const key in value) {
    if (unstorableReason(key) !== undefined || holdsUnstorable((value as Record<string, unknown>)[key])) return true;
  }
  return false;
};

/** The strings and member names of a JSON value that jsonb refuses, at most `limit` of them. */
export function unstorableStrings(value: unknown, limit = 20): UnstorableString[] {
  if (!holdsUnstorable(value)) return [];
  const found: UnstorableString[] = [];
  const path: (string | number)[] = [];
  const walk = (node: unknown): void => {
    if (found.length >= limit) return;
    if (typeof node === 'string') {
      const reason = unstorableReason(node);
      if (reason) found.push({ path: pointer(path) || '/', reason, inKey: false });
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((item, index) => [index, item])
      : Object.entries(node);
    for (const [key, item] of entries) {
      path.push(key);
      const reason = typeof key === 'string' ? unstorableReason(key) : undefined;
      if (reason && found.length < limit) found.push({ path: pointer(path), reason, inKey: true });
      walk(item);
      path.pop();
    }
  };
  walk(value);
  return found;
}

/** One line naming the first refused string of `value`, safe to store itself; undefined when there is none. */
export function describeUnstorable(value: unknown, what: string): string | undefined {
  const [first] = unstorableStrings(value, 1);
  if (!first) return undefined;
  const where = first.inKey ? `a member name at ${first.path}` : first.path === '/' ? '' : ` at ${first.path}`;
  return first.inKey
    ? `${what} contains ${first.reason} in ${storableText(where)}, which the database cannot store`
    : `${what} contains ${first.reason}${storableText(where)}, which the database cannot store`;
}

/** The value as JSON keeps it (dates become ISO strings, undefined properties go); throws NotJsonError when JSON or the database cannot hold it. */
export function toJsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  let json: unknown = value;
  if (!isPlainJson(value, new Set())) {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw new NotJsonError(
        `output is not JSON: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      );
    }
    json = text === undefined ? null : (JSON.parse(text) as unknown);
  }
  const unstorable = describeUnstorable(json, 'output');
  if (unstorable) throw new NotJsonError(unstorable);
  return json;
}
