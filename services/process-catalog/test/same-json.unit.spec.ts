import { sameJson } from '../src/domain/shared/same-json.js';

describe('sameJson', () => {
  test.each([
    [{ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, true],
    [{ a: 1 }, { a: 2 }, false],
    [[1, 2], [2, 1], false],
    [{ a: [] }, { a: {} }, false],
    [null, {}, false],
    ['x', 'x', true],
  ])('%j vs %j -> %s', (a, b, expected) => {
    expect(sameJson(a, b)).toBe(expected);
  });
});
