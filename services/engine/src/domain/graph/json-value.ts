/**
 * Node outputs become event data, stored as JSON next to other executions' events in one group
 * commit: a value JSON cannot hold (BigInt, a cycle) must fail its node, never the commit.
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

/** The value as JSON keeps it (dates become ISO strings, undefined properties go); throws NotJsonError when JSON cannot hold it. */
export function toJsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (isPlainJson(value, new Set())) return value;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new NotJsonError(
      `output is not JSON: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    );
  }
  return text === undefined ? null : (JSON.parse(text) as unknown);
}
