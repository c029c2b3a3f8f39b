/**
 * Values frozen all the way down by `deepFreeze`. `Object.isFrozen` looks at the top only: what
 * is computed once per value and kept (a process revision's snapshot, its stored id, its size)
 * is kept only for values in here, which nothing can change.
 */
const deeplyFrozen = new WeakSet<object>();

/** Freezes `value` and everything it holds (also what was frozen at its top only), and notes it. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || deeplyFrozen.has(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  deeplyFrozen.add(value);
  return value;
}

export const isDeepFrozen = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && deeplyFrozen.has(value);
