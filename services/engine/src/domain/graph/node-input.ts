/**
 * A node's input: the merge of its active parents' inputs plus each parent's output under the
 * parent's label, so `input["<label>"]` reaches any ancestor (DESIGN.md).
 */
export interface ParentResult {
  label: string;
  input: Record<string, unknown>;
  output: unknown;
}

export function mergeNodeInput(parents: readonly ParentResult[]): Record<string, unknown> {
  if (parents.length === 1) {
    const only = parents[0] as ParentResult;
    return { ...only.input, [only.label]: only.output };
  }
  // Own properties defined, not assigned: a key or label `__proto__` is a key like any other.
  const merged: Record<string, unknown> = {};
  for (const parent of parents) for (const [key, value] of Object.entries(parent.input)) defineOwn(merged, key, value);
  for (const parent of parents) defineOwn(merged, parent.label, parent.output);
  return merged;
}

const defineOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
};

/** What a handle that carries one key of its node's output passes on: that key's value, or null. */
export function outputKey(output: unknown, handle: string): unknown {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return null;
  return Object.hasOwn(output, handle) ? (output as Record<string, unknown>)[handle] : null;
}
