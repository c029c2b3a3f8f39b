/**
 * Template references `{{input["<label>"]["<field>"]}}` inside node configs: finding them (lint)
 * and rewriting them when a label is renamed. The syntax is the engine's (its
 * `parseTemplatePath`): the node subscript right after `input` may be `["label"]` (JSON string
 * escapes), `['label']`, `[0]` or `.label`; later subscripts are fields.
 */
const TEMPLATE = /\{\{\s*(.*?)\s*\}\}/g;
const NODE_SUBSCRIPT = /^input\s*(?:\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\d+))\s*\]|\.([A-Za-z_$][\w$]*))/;

const fromDoubleQuoted = (raw: string): string => {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw.replace(/\\(.)/g, '$1');
  }
};

/** The label a template expression starts from, and how long its node subscript is. */
function nodeSubscript(expression: string): { label: string; length: number } | undefined {
  const match = NODE_SUBSCRIPT.exec(expression);
  if (!match) return undefined;
  const [whole, doubleQuoted, singleQuoted, index, dotted] = match;
  const label =
    doubleQuoted !== undefined
      ? fromDoubleQuoted(doubleQuoted)
      : singleQuoted !== undefined
        ? singleQuoted.replace(/\\(.)/g, '$1')
        : (index ?? dotted ?? '');
  return { label, length: whole.length };
}

/** Every label referenced by templates in a string. */
export function labelsReferencedIn(text: string): string[] {
  const labels: string[] = [];
  for (const template of text.matchAll(TEMPLATE)) {
    const subscript = nodeSubscript(template[1] ?? '');
    if (subscript) labels.push(subscript.label);
  }
  return labels;
}

/** Every label referenced anywhere in a JSON value (strings nested in objects and arrays). */
export function labelsReferencedInValue(value: unknown): string[] {
  if (typeof value === 'string') return labelsReferencedIn(value);
  if (Array.isArray(value)) return value.flatMap(labelsReferencedInValue);
  if (value && typeof value === 'object') return Object.values(value).flatMap(labelsReferencedInValue);
  return [];
}

function renameInString(text: string, from: string, to: string): string {
  return text.replace(TEMPLATE, (whole: string, expression: string) => {
    const subscript = nodeSubscript(expression);
    if (!subscript || subscript.label !== from) return whole;
    // Only the node subscript changes; it is written in the canonical `["label"]` form.
    const start = whole.indexOf(expression);
    const rewritten = `input[${JSON.stringify(to)}]${expression.slice(subscript.length)}`;
    return whole.slice(0, start) + rewritten + whole.slice(start + expression.length);
  });
}

/** A copy of a JSON value with every reference to label `from` pointing at `to`. */
export function renameLabelInValue<T>(value: T, from: string, to: string): T {
  if (typeof value === 'string') return renameInString(value, from, to) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => renameLabelInValue(item, from, to)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, renameLabelInValue(item, from, to)]),
    ) as T;
  }
  return value;
}
