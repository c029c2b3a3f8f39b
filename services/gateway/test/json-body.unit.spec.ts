import { ProblemError } from '@weft/contracts';
import { exceedsDepth, MAX_JSON_DEPTH, parseJsonBody, unstorableText } from '../src/adapters/http/json-body.js';

describe('JSON request bodies', () => {
  const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

  test('an empty body is no body', () => {
    expect(parseJsonBody('')).toBeUndefined();
    expect(parseJsonBody('  \n')).toBeUndefined();
  });

  test('ordinary documents parse', () => {
    expect(parseJsonBody('{"a":[1,{"b":null}]}')).toEqual({ a: [1, { b: null }] });
  });

  test.each([
    ['invalid JSON', '{"a":'],
    ['nesting beyond the limit', nested(MAX_JSON_DEPTH + 1)],
    ['pathological nesting', nested(50_000)],
  ])('%s is a 400', (_name, text) => {
    expect(() => parseJsonBody(text)).toThrow(ProblemError);
    try {
      parseJsonBody(text);
    } catch (error) {
      expect((error as ProblemError).problem).toMatchObject({ status: 400, errors: [{ path: '/' }] });
    }
  });

  test('depth counting is exact at the limit', () => {
    expect(exceedsDepth(JSON.parse(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false);
    expect(exceedsDepth({ a: { b: { c: 1 } } }, 2)).toBe(true);
    expect(exceedsDepth({ a: { b: { c: 1 } } }, 3)).toBe(false);
  });

  test.each([
    ['__proto__ at the top', '{"__proto__":{"isAdmin":true}}', '/__proto__'],
    ['__proto__ deep inside', '{"a":[{"b":{"__proto__":{"x":1}}}]}', '/a/0/b/__proto__'],
    ['__proto__ written with escapes', '{"\\u005f_proto__":{"x":1}}', '/__proto__'],
    ['constructor.prototype', '{"config":{"constructor":{"prototype":{"x":1}}}}', '/config/constructor/prototype'],
  ])('%s is a 400 naming where it is', (_name, text, path) => {
    try {
      parseJsonBody(text);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).problem).toMatchObject({ status: 400, errors: [{ path }] });
    }
  });

  test('keys named like prototype keys but harmless parse', () => {
    expect(parseJsonBody('{"constructor":{"name":"x"},"prototype":1,"proto":2}')).toEqual({
      constructor: { name: 'x' },
      prototype: 1,
      proto: 2,
    });
  });

  test.each([
    ['a NUL in a value', '{"a":{"b":"x\\u0000y"}}', '/a/b', 'must not contain the NUL character'],
    ['a NUL in a key', '{"a":{"k\\u0000":1}}', '/a/k\u0000', 'key must not contain the NUL character'],
    ['a lone high surrogate', '{"list":["ok","\\ud800"]}', '/list/1', 'must not contain a lone UTF-16 surrogate'],
    ['a lone low surrogate at the top', '"\\udfff"', '/', 'must not contain a lone UTF-16 surrogate'],
  ])('%s is a 400 naming where it is, since the database cannot store it', (_name, text, path, message) => {
    try {
      parseJsonBody(text);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(ProblemError);
      expect((error as ProblemError).problem).toMatchObject({ status: 400, errors: [{ path, message }] });
    }
  });

  test('paired surrogates (emoji) and escaped backslashes before u0000 are fine', () => {
    expect(parseJsonBody('{"e":"\\ud83d\\ude00","t":"\\\\u0000"}')).toEqual({ e: '\u{1F600}', t: '\\u0000' });
    expect(unstorableText({ e: '\u{1F600}' })).toBeUndefined();
  });
});
