/** JSONPath spelling of locations in a JSON value: `$.invoice.lines[2].amount`, `$['odd key']`. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export type PathSegment = string | number;

export function jsonPathOf(segments: readonly PathSegment[]): string {
  let path = '$';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += `.${segment}`;
    else path += `[${JSON.stringify(segment).replace(/^"|"$/g, "'")}]`;
  }
  return path;
}

/**
 * Segments of an ajv instancePath (a JSON pointer) read against the value it points into, so an
 * array index becomes a number and an object key that looks like one stays a key.
 */
export function segmentsOfPointer(pointer: string, value: unknown): PathSegment[] {
  if (pointer === '') return [];
  const segments: PathSegment[] = [];
  let current: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(token)) {
      segments.push(Number(token));
      current = current[Number(token)];
    } else {
      segments.push(token);
      current =
        current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[token] : undefined;
    }
  }
  return segments;
}
