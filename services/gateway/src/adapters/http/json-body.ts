import { badRequest } from '@weft/contracts';

/**
 * JSON bodies are parsed here rather than by Fastify: an empty body means "no body", and a body
 * nested deeper than MAX_JSON_DEPTH is refused (400), because every hop across the bus copies it
 * with recursive JSON functions that a pathological document would overflow. Prototype keys are
 * refused as Fastify's default parser refuses them.
 */
export const MAX_JSON_DEPTH = 128;

/** Depth of nested arrays/objects, counted without recursion; stops once past `limit`. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}

const hasOwn = (node: object, key: string): boolean => Object.prototype.hasOwnProperty.call(node, key);
const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The quick text test of secure-json-parse: only a body that may hold the keys is walked. */
const SUSPECT_PROTO =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
const SUSPECT_CONSTRUCTOR =
  /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;

interface Visit {
  node: object;
  key: string;
  parent: Visit | undefined;
}

const pathOf = (visit: Visit, last: string): string => {
  const keys = [last];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) keys.push(pointerToken(at.key));
  return `/${keys.reverse().join('/')}`;
};

/**
 * Where a document holds `__proto__`, or `constructor.prototype`: the keys that would replace an
 * object's prototype once merged into another object. Refused like Fastify's own parser does
 * (secure-json-parse with protoAction and constructorAction "error"). Walks without recursion and
 * builds a path only for what it finds.
 */
export function prototypePoisoningPath(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Visit[] = [{ node: value, key: '', parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { node } = visit;
    if (!Array.isArray(node)) {
      if (hasOwn(node, '__proto__')) return pathOf(visit, '__proto__');
      const constructor: unknown = (node as Record<string, unknown>).constructor;
      if (hasOwn(node, 'constructor') && constructor !== null && typeof constructor === 'object') {
        if (hasOwn(constructor, 'prototype')) return pathOf(visit, 'constructor/prototype');
      }
    }
    for (const key of Object.keys(node)) {
      const child: unknown = (node as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ node: child, key, parent: visit });
    }
  }
  return undefined;
}

/** Why PostgreSQL's jsonb and text columns cannot store a string, or undefined when they can. */
const unstorableReason = (text: string): string | undefined =>
  text.includes('\u0000')
    ? 'must not contain the NUL character'
    : text.isWellFormed()
      ? undefined
      : 'must not contain a lone UTF-16 surrogate';

/**
 * The first string (value or key) of a document that PostgreSQL cannot store: a NUL character or
 * a lone UTF-16 surrogate. Refused at the door, since a stored copy of it would fail the
 * transaction it shares with other requests' events. Walks without recursion.
 */
export function unstorableText(value: unknown): { path: string; message: string } | undefined {
  const stack: Array<{ node: unknown; path: string }> = [{ node: value, path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node === 'string') {
      const message = unstorableReason(node);
      if (message) return { path: path || '/', message };
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    for (const [key, child] of Object.entries(node)) {
      const childPath = `${path}/${pointerToken(key)}`;
      const message = unstorableReason(key);
      if (message) return { path: childPath, message: `key ${message}` };
      stack.push({ node: child, path: childPath });
    }
  }
  return undefined;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('the body is not valid JSON', [{ path: '/', message: 'is not valid JSON' }]);
  }
  if (exceedsDepth(parsed, MAX_JSON_DEPTH)) {
    throw badRequest('the body is nested too deeply', [
      { path: '/', message: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  }
  const suspect = SUSPECT_PROTO.test(text) || SUSPECT_CONSTRUCTOR.test(text);
  const poisoned = suspect ? prototypePoisoningPath(parsed) : undefined;
  if (poisoned !== undefined) {
    throw badRequest('the body contains a forbidden prototype property', [
      { path: poisoned, message: 'must not be __proto__ or constructor.prototype' },
    ]);
  }
  // JSON text can only spell NUL or a surrogate as an escape: bodies without one are not walked.
  const unstorable = /\\u(?:0000|d[89a-f])/i.test(text) ? unstorableText(parsed) : undefined;
  if (unstorable !== undefined) throw badRequest('the body contains text that cannot be stored', [unstorable]);
  return parsed;
}
