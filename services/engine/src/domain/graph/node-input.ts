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
  const merged: Record<string, unknown> = {};
  for (const parent of parents) Object.assign(merged, parent.input);
  for (const parent of parents) merged[parent.label] = parent.output;
  return merged;
}
