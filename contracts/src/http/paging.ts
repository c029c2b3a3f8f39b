import { badRequest, type ProblemViolation } from '../problem.js';

/** Lists answer `{items, page, pageSize, total}`; page starts at 1, pageSize defaults to 20, at most 200. */
export interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  total: number;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 200;

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** Reads `page` and `pageSize` from a query; 400 listing both problems when they are out of range. */
export function parsePaging(query: Record<string, string | string[] | undefined>): { page: number; pageSize: number } {
  const errors: ProblemViolation[] = [];
  const read = (name: string, fallback: number, max: number): number => {
    const raw = single(query[name]);
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > max) {
      errors.push({ path: `/query/${name}`, message: `must be an integer from 1 to ${max}` });
      return fallback;
    }
    return value;
  };
  const page = read('page', 1, Number.MAX_SAFE_INTEGER);
  const pageSize = read('pageSize', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (errors.length > 0) throw badRequest('invalid paging parameters', errors);
  return { page, pageSize };
}
