import { decodeReplyApart, encodeReplyApart } from '../src/adapters/nats/http-reply-apart.js';
import { ProblemError } from '@weft/contracts';
import { JsonText } from '../src/index.js';

describe('an HTTP reply sent apart over NATS', () => {
  it('comes back with the same status and headers, and its body as the JSON text of the body', () => {
    const body = { id: 'é1', list: [1, null, 'x'], quote: '"\u2028' };
    const reply = { status: 201, headers: { location: '/a/é' }, body };
    const apart = encodeReplyApart(reply)!;
    const back = decodeReplyApart<{ status: number; headers: Record<string, string>; body: JsonText }>(
      apart.payload,
      String(apart.bodyAt),
      'weft.test',
    );
    expect(back.status).toBe(201);
    expect(back.headers).toEqual({ location: '/a/é' });
    expect(back.body).toBeInstanceOf(JsonText);
    expect(back.body.text).toBe(JSON.stringify(body));
    expect(JSON.stringify(back)).toBe(JSON.stringify(reply));
    const array = encodeReplyApart({ status: 200, body: [body] })!;
    expect(decodeReplyApart<{ body: JsonText }>(array.payload, String(array.bodyAt), 'weft.test').body.text).toBe(
      JSON.stringify([body]),
    );
  });

  it('is not used for a reply that is not an HTTP reply whose body encodes to an object or array', () => {
    const stamp = new Date(0);
    const odd = [
      undefined,
      null,
      'text',
      5,
      { status: 200 },
      { status: 200, body: 'x' },
      { status: '200', body: {} },
      { status: 200, body: stamp },
      { status: 200, body: { toJSON: () => undefined } },
      { status: 200, body: { toJSON: () => 5 } },
      { status: 200, body: new JsonText('"s"') },
    ];
    for (const value of odd) expect(encodeReplyApart(value)).toBeUndefined();
  });

  it('answers 502 for a reply that does not hold together, whatever its body-start header says', () => {
    const apart = encodeReplyApart({ status: 200, body: { a: 1 } })!;
    for (const header of ['abc', '-1', '0', ' 5', '1e1', '0x10', '', '99999', String(apart.payload.length), '3']) {
      let caught: unknown;
      try {
        decodeReplyApart(apart.payload, header, 'weft.test');
      } catch (error) {
        caught = error;
      }
      expect([header, (caught as ProblemError | undefined)?.status]).toEqual([header, 502]);
    }
    const noStatus = new TextEncoder().encode('{"headers":{}}{"a":1}');
    expect(() => decodeReplyApart(noStatus, '14', 'weft.test')).toThrow(/no status/);
  });
});
