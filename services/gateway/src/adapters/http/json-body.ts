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

/**
 * Where a document holds `__proto__`, or `constructor.prototype`: the keys that would replace an
 * object's prototype once merged into another object. Refused like Fastify's own parser does
 * (secure-json-parse with protoAction and constructorAction "error"). Walks without recursion.
 */
export function prototypePoisoningPath(value: unknown): string | undefined {
  const stack: Array<{ node: unknown; path: string }> = [{ node: value, path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (!Array.isArray(node)) {
      if (hasOwn(node, '__proto__')) return `${path}/__proto__`;
      const constructor: unknown = (node as Record<string, unknown>).constructor;
      if (hasOwn(node, 'constructor') && constructor !== null && typeof constructor === 'object') {
        if (hasOwn(constructor, 'prototype')) return `${path}/constructor/prototype`;
      }
    }
    for (const [key, child] of Object.entries(node)) stack.push({ node: child, path: `${path}/${pointerToken(key)}` });
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
  const poisoned = prototypePoisoningPath(parsed);
  if (poisoned !== undefined) {
    throw badRequest('the body contains a forbidden prototype property', [
      { path: poisoned, message: 'must not be __proto__ or constructor.prototype' },
    ]);
  }
  return parsed;
}
