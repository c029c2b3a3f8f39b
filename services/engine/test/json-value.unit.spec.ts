import { NotJsonError, storableText, toJsonValue, unstorableStrings } from '../src/domain/graph/json-value.js';

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

describe('strings PostgreSQL jsonb cannot store', () => {
  test.each([
    ['a NUL in a value', { a: 'x\u0000' }, /output contains a NUL character at \/a, which the database cannot store/],
    ['a NUL in a key', { b: [{ 'k\u0000': 1 }] }, /a NUL character in a member name at \/b\/0\/k\ufffd/],
    ['a lone high surrogate', ['\ud800x'], /a lone surrogate at \/0/],
    ['a lone low surrogate at the top', '\udc00', /output contains a lone surrogate, which/],
    ['one in a value JSON turns plain', { d: new Date(0), s: new String('\u0000') }, /NUL character at \/s/],
  ])('%s fails the output', (_name, value, message) => {
    expect(() => toJsonValue(value)).toThrow(NotJsonError);
    expect(() => toJsonValue(value)).toThrow(message);
  });

  test('a surrogate pair (an emoji) and U+FFFD are fine', () => {
    expect(toJsonValue({ '😀': 'a😀\ufffd' })).toEqual({ '😀': 'a😀\ufffd' });
  });

  test('messages are made storable: NUL and lone surrogates become U+FFFD, pairs stay', () => {
    expect(storableText('a\u0000b\ud800c😀\udfff')).toBe('a\ufffdb\ufffdc😀\ufffd');
  });

  test('every place is listed, values and member names', () => {
    expect(unstorableStrings({ a: '\u0000', '\ud800': ['ok', '\udc00'] })).toEqual([
      { path: '/a', reason: 'a NUL character', inKey: false },
      { path: '/\ud800', reason: 'a lone surrogate', inKey: true },
      { path: '/\ud800/1', reason: 'a lone surrogate', inKey: false },
    ]);
  });
});
