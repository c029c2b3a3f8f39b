import { badRequest } from '@weft/contracts';

/**
 * JSON bodies are parsed here rather than by Fastify: an empty body means "no body", and a body
 * nested deeper than MAX_JSON_DEPTH is refused (400), because every hop across the bus copies it
 * with recursive JSON functions that a pathological document would overflow.
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
  return parsed;
}
