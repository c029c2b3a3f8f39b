import { deepFreeze, isDeepFrozen } from '../domain/graph/deep-freeze.js';

const orderedFrozen = new WeakMap<object, unknown>();

/**
 * `inJsonbKeyOrder` of a value nothing can change (a process revision's graph snapshot, which
 * every synchronous answer of that revision carries), ordered once and kept frozen: the ordering
 * copied the whole graph for each answer.
 */
export function inJsonbKeyOrderKept(value: unknown): unknown {
  if (!isDeepFrozen(value)) return inJsonbKeyOrder(value);
  let ordered = orderedFrozen.get(value);
  if (ordered === undefined) {
    ordered = deepFreeze(inJsonbKeyOrder(value));
    orderedFrozen.set(value, ordered);
  }
  return ordered;
}

/**
 * A JSON value with its objects' keys in the order PostgreSQL's jsonb keeps them (shorter keys
 * first, then by their UTF-8 bytes), as a read of a jsonb column returns it: an answer built from
 * memory then has the same text as a read of the same record.
 */
export function inJsonbKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inJsonbKeyOrder);
  if (value === null || typeof value !== 'object') return value;
  const ordered: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source).sort(jsonbKeyOrder)) {
    const orderedValue = inJsonbKeyOrder(source[key]);
    // Assigned (defining every key made the objects slow dictionaries), but `__proto__` is
    // defined: assigned, it would set the prototype instead of staying a key.
    if (key === '__proto__')
      Object.defineProperty(ordered, key, {
        value: orderedValue,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else ordered[key] = orderedValue;
  }
  return ordered;
}

/** Only code units below 0x80: compared as strings, such keys order as their UTF-8 bytes do. */
const isAscii = (key: string): boolean => {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) > 0x7f) return false;
  return true;
};

/** How jsonb orders an object's keys: shorter first, then by UTF-8 bytes. */
export function jsonbKeyOrder(a: string, b: string): number {
  // ASCII keys (nearly all) compare as strings; others by their UTF-8 bytes, as jsonb does.
  if (isAscii(a) && isAscii(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length - right.length || Buffer.compare(left, right);
}
