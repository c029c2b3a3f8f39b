import type { ActualFile, ExpectedFiles, FileComparisonResults, ValidationError } from '@weft/contracts';
import { jsonPathOf, type PathSegment } from './json-path.js';

/** A file reference as triggers and nodes produce it: `{name, url, size}` (more fields allowed). */
const isFileReference = (value: Record<string, unknown>): boolean =>
  typeof value.name === 'string' && typeof value.url === 'string' && typeof value.size === 'number';

/** Every file reference in the output, in document order, with where it was found. */
export function findFiles(output: unknown): ActualFile[] {
  const found: ActualFile[] = [];
  const walk = (value: unknown, segments: PathSegment[]): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, [...segments, index]));
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    if (isFileReference(record)) {
      found.push({
        name: record.name as string,
        url: record.url as string,
        size: record.size as number,
        path: jsonPathOf(segments),
      });
      return;
    }
    for (const [key, child] of Object.entries(record)) walk(child, [...segments, key]);
  };
  walk(output, []);
  return found;
}

/**
 * `*` any run of characters, `?` one character, everything else literal; the whole name must match.
 * A linear two-pointer glob match (backtracking to the last `*` only): a regular expression built
 * from `*a*a*a…` backtracks exponentially and would block the event loop every tenant shares.
 */
export function wildcardMatches(pattern: string, name: string): boolean {
  const p = [...pattern];
  const n = [...name];
  let pi = 0;
  let ni = 0;
  let star = -1;
  let resume = 0;
  while (ni < n.length) {
    if (pi < p.length && (p[pi] === '?' || (p[pi] !== '*' && p[pi] === n[ni]))) {
      pi++;
      ni++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      resume = ni;
    } else if (star !== -1) {
      pi = star + 1;
      ni = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

/**
 * Compares the output's files with the expectation: the count, and each pattern matched by a
 * different file of at least its minSize (first fitting file in document order). Also returns one
 * violation per mismatch, at the offending file's path or `$` when no file is involved.
 */
export function compareFiles(
  expected: ExpectedFiles,
  output: unknown,
): { results: FileComparisonResults; violations: ValidationError[] } {
  const actualFiles = findFiles(output);
  const violations: ValidationError[] = [];
  const expectedCount = expected.count ?? null;
  const countMatches = expectedCount === null || expectedCount === actualFiles.length;
  if (!countMatches) {
    violations.push({
      field: 'files',
      message: `expected ${expectedCount} files, found ${actualFiles.length}`,
      path: '$',
    });
  }
  const used = new Set<ActualFile>();
  const files = (expected.files ?? []).map((file, index) => {
    const minSize = file.minSize ?? 0;
    const named = actualFiles.filter((actual) => !used.has(actual) && wildcardMatches(file.namePattern, actual.name));
    const match = named.find((actual) => actual.size >= minSize);
    if (match) {
      used.add(match);
      return { namePattern: file.namePattern, minSize, matched: true, actualFile: match, reason: null };
    }
    const tooSmall = named[0];
    const reason = tooSmall
      ? `${tooSmall.name} is ${tooSmall.size} bytes, below the minimum of ${minSize}`
      : `no file matches ${file.namePattern}`;
    violations.push({
      field: `files[${index}]`,
      message: reason,
      path: tooSmall ? `${tooSmall.path === '$' ? '$' : tooSmall.path}.size` : '$',
    });
    return { namePattern: file.namePattern, minSize, matched: false, actualFile: null, reason };
  });
  return {
    results: {
      valid: violations.length === 0,
      expectedCount,
      actualCount: actualFiles.length,
      countMatches,
      files,
      actualFiles,
    },
    violations,
  };
}
