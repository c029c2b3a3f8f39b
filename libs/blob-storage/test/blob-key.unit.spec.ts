import { InvalidBlobKeyError, assertValidBlobKey, blobKeyOf, blobUrlOf, toKeySegment } from '../src/index.js';

describe('blob keys', () => {
  test.each([
    'a',
    'org-1/executions/e-7/invoice.pdf',
    'with space/ü.txt',
    '100%',
    'a/.hidden',
    'a/..b',
    'k'.repeat(1024),
  ])('accepts %j', (key) => {
    expect(assertValidBlobKey(key)).toBe(key);
  });

  test.each(['', '/a', 'a/', 'a//b', '.', '..', 'a/../b', 'a/./b', 'a\\b', 'a\nb', 'a\u007fb', 'é'.repeat(513)])(
    'rejects %j',
    (key) => {
      expect(() => assertValidBlobKey(key)).toThrow(InvalidBlobKeyError);
    },
  );

  test('a url encodes each segment and decodes back to the same key', () => {
    const key = 'org 1/100% #done?/ü.txt';

    const url = blobUrlOf(key);

    expect(url).toBe('weft-blob://org%201/100%25%20%23done%3F/%C3%BC.txt');
    expect(blobKeyOf(url)).toBe(key);
    expect(blobKeyOf({ name: 'x', url, size: 1, contentType: 'text/plain' })).toBe(key);
  });

  test('a plain key is taken literally, percent signs included', () => {
    expect(blobKeyOf('a/%2E%2E')).toBe('a/%2E%2E');
  });

  test.each(['weft-blob://a/%2E%2E/b', 'weft-blob://a%2Fb', 'weft-blob://%E0%A4%A', 'weft-blob://'])(
    'rejects the url %j',
    (url) => {
      expect(() => blobKeyOf(url)).toThrow(InvalidBlobKeyError);
    },
  );

  test.each([
    ['invoice.pdf', 'invoice.pdf'],
    ['../../etc/passwd', '.._.._etc_passwd'],
    ['a\\b', 'a_b'],
    ['..', '_'],
    ['  ', '_'],
    ['line\nbreak', 'line_break'],
  ])('toKeySegment(%j) is %j', (name, segment) => {
    expect(toKeySegment(name)).toBe(segment);
    expect(assertValidBlobKey(`prefix/${toKeySegment(name)}`)).toBe(`prefix/${segment}`);
  });

  test('toKeySegment keeps the end of a very long name', () => {
    const segment = toKeySegment(`${'x'.repeat(500)}.pdf`);

    expect(segment).toHaveLength(200);
    expect(segment.endsWith('.pdf')).toBe(true);
  });
});
