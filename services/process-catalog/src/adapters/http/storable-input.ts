import { badRequest, type HttpCall, type ProblemViolation } from '@weft/contracts';

/**
 * Deeper JSON than this is refused: configs, schemas and documents are walked recursively (label
 * renames, lint, ajv), and nothing a canvas or an export produces comes near it.
 */
export const MAX_JSON_DEPTH = 64;

const pointer = (segments: readonly (string | number)[]): string =>
  segments.map((segment) => `/${String(segment).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** PostgreSQL text and jsonb cannot hold U+0000, so such a value could never be stored. */
const hasNul = (text: string): boolean => text.includes('\u0000');

function walk(value: unknown, path: (string | number)[], depth: number, violations: ProblemViolation[]): void {
  if (typeof value === 'string') {
    if (hasNul(value)) violations.push({ path: pointer(path) || '/', message: 'must not contain the NUL character' });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_JSON_DEPTH) {
    violations.push({ path: pointer(path) || '/', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` });
    return;
  }
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === 'string' && hasNul(key)) {
      violations.push({ path: pointer([...path, key]), message: 'the name must not contain the NUL character' });
    }
    walk(item, [...path, key], depth + 1, violations);
  }
}

/** Every part of a call that could not be stored or walked safely; empty when it is fine. */
export function unstorableInputViolations(call: HttpCall): ProblemViolation[] {
  const violations: ProblemViolation[] = [];
  walk(call.body, [], 1, violations);
  for (const [name, value] of Object.entries(call.query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== undefined && hasNul(item)) {
        violations.push({ path: pointer(['query', name]), message: 'must not contain the NUL character' });
      }
    }
  }
  for (const [name, value] of Object.entries(call.params)) {
    if (hasNul(value))
      violations.push({ path: pointer(['params', name]), message: 'must not contain the NUL character' });
  }
  return violations;
}

/** Refuses, with every problem listed, a call whose input the catalog could not store. */
export function assertStorableInput(call: HttpCall): void {
  const violations = unstorableInputViolations(call);
  if (violations.length > 0) throw badRequest('the request holds values that cannot be stored', violations);
}
