import { NotJsonError, toJsonValue } from '../src/domain/graph/json-value.js';

describe('node outputs as JSON values', () => {
  test.each([
    ['plain data as is', { a: [1, 'x', true, null, { b: 2 }] }, { a: [1, 'x', true, null, { b: 2 }] }],
    ['undefined as null', undefined, null],
    ['a date as its ISO string', new Date(0), '1970-01-01T00:00:00.000Z'],
    ['undefined properties dropped', { a: 1, b: undefined }, { a: 1 }],
    ['non-finite numbers as null', [Number.NaN, Infinity], [null, null]],
    ['a top-level function as null', () => 1, null],
  ])('keeps %s', (_name, value, expected) => {
    expect(toJsonValue(value)).toEqual(expected);
  });

  test('returns plain JSON without copying it', () => {
    const value = { rows: [{ id: 1 }] };
    expect(toJsonValue(value)).toBe(value);
  });

  test('a shared (not cyclic) object is plain JSON', () => {
    const shared = { x: 1 };
    expect(toJsonValue({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });

  test.each([
    ['BigInt', { n: 10n }],
    [
      'a cycle',
      (() => {
        const a: Record<string, unknown> = {};
        a.self = a;
        return a;
      })(),
    ],
  ])('refuses %s with NotJsonError', (_name, value) => {
    expect(() => toJsonValue(value)).toThrow(NotJsonError);
  });
});
