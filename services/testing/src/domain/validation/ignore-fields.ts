import { JSONPath } from 'jsonpath-plus';
import { jsonPathOf, segmentsOfPointer } from './json-path.js';

/**
 * Removes what each JSONPath of `ignoreFields` selects from a copy of the output, and says which
 * locations were removed (so a `required` on them is not a violation either). Script filters
 * (`?()`, `()`) are refused: a test case is tenant input and must not run code in the service.
 */
export function withoutIgnoredFields(
  output: unknown,
  ignoreFields: readonly string[],
): { output: unknown; removed: string[] } {
  if (ignoreFields.length === 0 || output === null || typeof output !== 'object') return { output, removed: [] };
  const copy = structuredClone<object>(output);
  const removed: string[] = [];
  for (const path of ignoreFields) {
    // Paths of the original output: an ignored array element is named by its index before any removal.
    for (const match of JSONPath({ path, json: output, resultType: 'pointer', eval: false, wrap: true }) as string[]) {
      removed.push(jsonPathOf(segmentsOfPointer(match, output)));
    }
    const matches = JSONPath({ path, json: copy, resultType: 'all', eval: false, wrap: true }) as {
      parent: unknown;
      parentProperty: string | number;
    }[];
    // Array elements go last-first so earlier indices stay valid while splicing.
    const ordered = [...matches].sort((a, b) =>
      typeof a.parentProperty === 'number' && typeof b.parentProperty === 'number'
        ? b.parentProperty - a.parentProperty
        : 0,
    );
    for (const { parent, parentProperty } of ordered) {
      if (Array.isArray(parent) && typeof parentProperty === 'number') parent.splice(parentProperty, 1);
      else if (parent !== null && typeof parent === 'object')
        delete (parent as Record<string, unknown>)[String(parentProperty)];
    }
  }
  return { output: copy, removed };
}

/** Whether `path` is one of the removed locations or inside one. */
export const isIgnored = (path: string, removed: readonly string[]): boolean =>
  removed.some((prefix) => path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`));

/** Why an ignoreFields entry cannot be used, or undefined when it can. */
export function ignoreFieldProblem(path: string): string | undefined {
  if (!path.startsWith('$')) return 'must be a JSONPath starting with $';
  try {
    JSONPath({ path, json: {}, eval: false, wrap: true });
    return undefined;
  } catch (error) {
    return `is not a usable JSONPath: ${error instanceof Error ? error.message : String(error)}`;
  }
}
