/**
 * Template references `{{input["<label>"]["<field>"]}}` inside node configs: finding them (lint)
 * and rewriting them when a label is renamed.
 */
const TEMPLATE = /\{\{(.*?)\}\}/gs;
const LABEL_REFERENCE = /input\s*\[\s*"((?:[^"\\]|\\.)*)"\s*\]/g;

const unescape = (raw: string): string => raw.replace(/\\(.)/g, '$1');
const escape = (label: string): string => label.replace(/["\\]/g, (char) => `\\${char}`);

/** Every label referenced by templates in a string. */
export function labelsReferencedIn(text: string): string[] {
  const labels: string[] = [];
  for (const template of text.matchAll(TEMPLATE)) {
    const inner = template[1] ?? '';
    // Only the first subscript of `input` names a node; later ones are fields.
    const first = /^\s*input\s*\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(inner);
    if (first?.[1] !== undefined) labels.push(unescape(first[1]));
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
  return text.replace(TEMPLATE, (whole: string, inner: string) => {
    const rewritten = inner.replace(LABEL_REFERENCE, (reference: string, raw: string, offset: number) => {
      // Only the node subscript right after `input` is a label: `input["a"]["a"]` keeps its field.
      const before = inner.slice(0, offset);
      if (/\]\s*$/.test(before)) return reference;
      return unescape(raw) === from ? `input["${escape(to)}"]` : reference;
    });
    return `{{${rewritten}}}`;
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
