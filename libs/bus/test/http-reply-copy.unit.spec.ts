import { ProblemError } from '@weft/contracts';
import { JsonText } from '../src/json-text.js';
import { httpReplyCopyWithin, jsonCopyWithin } from '../src/message-size.js';

describe('an HTTP reply copied with its body left as JSON text', () => {
  const reply = { status: 200, headers: { etag: '"v1"' }, body: { name: 'Zoë', steps: [1, { ok: true }, null] } };
  const bytes = Buffer.byteLength(JSON.stringify(reply), 'utf8');

  test('holds the body as the text JSON.stringify makes of it, and copies the rest', () => {
    const copy = httpReplyCopyWithin(reply, 1024);
    expect(copy.body).toBeInstanceOf(JsonText);
    expect((copy.body as unknown as JsonText).text).toBe(JSON.stringify(reply.body));
    expect(JSON.stringify(copy)).toBe(JSON.stringify(reply));
    expect(copy.headers).toEqual(reply.headers);
    expect(copy.headers).not.toBe(reply.headers);
  });

  test('is refused past the same number of bytes as the whole reply copied', () => {
    expect(() => httpReplyCopyWithin(reply, bytes)).not.toThrow();
    expect(() => jsonCopyWithin(reply, bytes, 'reply')).not.toThrow();
    for (const copy of [() => httpReplyCopyWithin(reply, bytes - 1), () => jsonCopyWithin(reply, bytes - 1, 'reply')]) {
      let thrown: unknown;
      try {
        copy();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ProblemError);
      expect((thrown as ProblemError).problem).toMatchObject({ status: 413 });
    }
  });

  test('copies a body that is not an object or array as before', () => {
    for (const body of ['text', 7, true, null, undefined]) {
      const copy = httpReplyCopyWithin({ status: 200, body }, 1024);
      expect(copy).toEqual(jsonCopyWithin({ status: 200, body }, 1024, 'reply'));
      expect(copy.body).not.toBeInstanceOf(JsonText);
    }
  });

  test('copies a body whose JSON is not an object or array (a Date, a toJSON answering text) as before', () => {
    for (const body of [new Date(0), { toJSON: () => 'hello' }, { toJSON: () => 7 }]) {
      const copy = httpReplyCopyWithin({ status: 200, body }, 1024);
      expect(copy).toEqual(jsonCopyWithin({ status: 200, body }, 1024, 'reply'));
      expect(copy.body).not.toBeInstanceOf(JsonText);
    }
  });

  test('counts the bytes of a reply that is its body alone exactly', () => {
    const alone = { body: { a: 1 } };
    const exact = Buffer.byteLength(JSON.stringify(alone), 'utf8');
    expect(() => httpReplyCopyWithin(alone, exact)).not.toThrow();
    expect(() => httpReplyCopyWithin(alone, exact - 1)).toThrow(ProblemError);
  });

  test('copies a body whose JSON is no text (toJSON answers undefined) as before', () => {
    const body = { toJSON: () => undefined };
    expect(httpReplyCopyWithin({ status: 204, body }, 1024)).toEqual({ status: 204 });
  });

  test('refuses a body longer than a JavaScript string with a 413, not a RangeError', () => {
    const text = 'p'.repeat(16 * 1024 * 1024);
    const body = Array.from({ length: 34 }, () => text);
    expect(() => httpReplyCopyWithin({ status: 200, body }, 8 * 1024 * 1024)).toThrow(
      'The reply is too large for the bus (more than a JavaScript string holds; at most 8388608).',
    );
  });

  test('stringifies to the value it holds wherever it ends up', () => {
    const held = new JsonText('{"b":[1,2],"a":"x"}');
    expect(JSON.stringify({ wrapped: held })).toBe('{"wrapped":{"b":[1,2],"a":"x"}}');
  });
});
