import { badRequest, type HttpCall, type ProblemViolation } from '@weft/contracts';

/** Deeper JSON is refused: test data is walked recursively (ignoreFields, files, ajv). */
const MAX_JSON_DEPTH = 64;

/** PostgreSQL text and jsonb cannot hold U+0000 or a lone surrogate, which JSON allows. */
const unstorable = (text: string): boolean => text.includes('\u0000') || !text.isWellFormed();

const pointer = (segments: readonly (string | number)[]): string =>
  segments.map((segment) => `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('') || '/';

function walk(value: unknown, path: (string | number)[], depth: number, violations: ProblemViolation[]): void {
  if (typeof value === 'string') {
    if (unstorable(value)) violations.push({ path: pointer(path), message: 'holds a character that cannot be stored' });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_JSON_DEPTH) {
    violations.push({ path: pointer(path), message: `is nested deeper than ${MAX_JSON_DEPTH} levels` });
    return;
  }
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === 'string' && unstorable(key)) {
      violations.push({ path: pointer([...path, key]), message: 'the name holds a character that cannot be stored' });
    }
    walk(item, [...path, key], depth + 1, violations);
  }
}

/** Refuses with one 400 a call whose body, query or path holds what the database cannot store. */
export function assertStorableCall(call: HttpCall): void {
  const violations: ProblemViolation[] = [];
  walk(call.body, [], 1, violations);
  walk(call.query, ['query'], 1, violations);
  walk(call.params, ['params'], 1, violations);
  if (violations.length > 0) throw badRequest('the request holds values that cannot be stored', violations);
}
