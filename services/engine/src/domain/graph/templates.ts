/**
 * `{{input["<label>"]["<field>"]}}` templates in node configs. A string that is exactly one
 * template becomes the referenced value with its JSON type; templates inside longer strings are
 * replaced by their text (objects as JSON). Paths are parsed once per string and cached, since
 * the same configs are resolved on every run.
 */
type PathSegment = string | number;
type CompiledString = { whole: PathSegment[] } | { parts: (string | PathSegment[])[] } | { literal: string };

const TEMPLATE = /\{\{\s*(.*?)\s*\}\}/g;
const cache = new Map<string, CompiledString>();

export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** Parses `input["a"]["b"][0].c` into ['a', 'b', 0, 'c']. */
export function parseTemplatePath(expression: string): PathSegment[] {
  if (!expression.startsWith('input')) throw new TemplateError(`template must start with input: {{${expression}}}`);
  const segments: PathSegment[] = [];
  const segment = /\[\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(\d+))\s*\]|\.([A-Za-z_$][\w$]*)/y;
  let at = 'input'.length;
  while (at < expression.length) {
    segment.lastIndex = at;
    const match = segment.exec(expression);
    if (!match) throw new TemplateError(`cannot read template {{${expression}}} at "${expression.slice(at)}"`);
    const [, doubleQuoted, singleQuoted, index, dotted] = match;
    if (doubleQuoted !== undefined) segments.push(JSON.parse(`"${doubleQuoted}"`) as string);
    else if (singleQuoted !== undefined) segments.push(singleQuoted.replace(/\\(.)/g, '$1'));
    else if (index !== undefined) segments.push(Number(index));
    else segments.push(dotted as string);
    at = segment.lastIndex;
  }
  return segments;
}

function compileString(text: string): CompiledString {
  const cached = cache.get(text);
  if (cached) return cached;
  let compiled: CompiledString;
  const matches = [...text.matchAll(TEMPLATE)];
  const first = matches[0];
  if (!first) compiled = { literal: text };
  else if (matches.length === 1 && first[0] === text) compiled = { whole: parseTemplatePath(first[1] ?? '') };
  else {
    const parts: (string | PathSegment[])[] = [];
    let last = 0;
    for (const match of matches) {
      if (match.index > last) parts.push(text.slice(last, match.index));
      parts.push(parseTemplatePath(match[1] ?? ''));
      last = match.index + match[0].length;
    }
    if (last < text.length) parts.push(text.slice(last));
    compiled = { parts };
  }
  if (cache.size > 50_000) cache.clear();
  cache.set(text, compiled);
  return compiled;
}

export function readPath(root: unknown, path: readonly PathSegment[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || value === undefined || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

const asText = (value: unknown): string =>
  value === undefined || value === null
    ? ''
    : typeof value === 'object'
      ? JSON.stringify(value)
      : (value as string | number | boolean).toString();

/** Whether a string holds at least one template. */
export const hasTemplate = (text: string): boolean => text.includes('{{');

/**
 * Counts what template resolution produces (as JSON text length, about bytes) and refuses past
 * `maxBytes`: a short config can reference a large value thousands of times, which would
 * otherwise exhaust the heap of the engine (and of every replica that resumes the execution).
 */
export class ExpansionBudget {
  private used = 0;
  private readonly sizes = new WeakMap<object, number>();

  constructor(private readonly maxBytes: number) {}

  add(bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxBytes) {
      throw new TemplateError(
        `the node's config expands to more than ${this.maxBytes} bytes with its templates resolved (WEFT_NODE_CONFIG_MAX_BYTES)`,
      );
    }
  }

  /** A referenced value costs its JSON length (measured once per object: it may be referenced many times). */
  addValue(value: unknown): void {
    if (value === null || typeof value !== 'object') return this.add(typeof value === 'string' ? value.length : 8);
    let size = this.sizes.get(value);
    if (size === undefined) {
      size = JSON.stringify(value)?.length ?? 0;
      this.sizes.set(value, size);
    }
    this.add(size);
  }
}

export function resolveString(text: string, input: unknown, budget?: ExpansionBudget): unknown {
  if (!hasTemplate(text)) {
    budget?.add(text.length);
    return text;
  }
  const compiled = compileString(text);
  if ('literal' in compiled) {
    budget?.add(compiled.literal.length);
    return compiled.literal;
  }
  if ('whole' in compiled) {
    const value = readPath(input, compiled.whole);
    budget?.addValue(value);
    return value;
  }
  const parts: string[] = [];
  for (const part of compiled.parts) {
    const piece = typeof part === 'string' ? part : asText(readPath(input, part));
    budget?.add(piece.length);
    parts.push(piece);
  }
  return parts.join('');
}

/** Default cap of a node's resolved config (WEFT_NODE_CONFIG_MAX_BYTES). */
export const DEFAULT_NODE_CONFIG_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Resolves every template in a JSON value; `skipKeys` are top-level keys left as they are. Throws
 * a TemplateError when the result would be larger than `maxBytes`.
 */
export function resolveTemplates<T>(
  value: T,
  input: unknown,
  skipKeys: readonly string[] = [],
  maxBytes = DEFAULT_NODE_CONFIG_MAX_BYTES,
): T {
  const budget = new ExpansionBudget(maxBytes);
  const walk = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') return resolveString(node, input, budget);
    if (Array.isArray(node)) return node.map((item) => walk(item, depth + 1));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(node)) {
        budget.add(key.length);
        out[key] = depth === 0 && skipKeys.includes(key) ? child : walk(child, depth + 1);
      }
      return out;
    }
    budget.add(8);
    return node;
  };
  return walk(value, 0) as T;
}
