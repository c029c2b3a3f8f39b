import { decodeReplyApart, encodeReplyApart } from '../src/adapters/nats/http-reply-apart.js';
import { JsonText } from '../src/index.js';

describe('an HTTP reply sent apart over NATS', () => {
  it('comes back with the same status and headers, and its body as the JSON text of the body', () => {
    const body = { id: 'é1', list: [1, null, 'x'], quote: '"\u2028' };
    const reply = { status: 201, headers: { location: '/a/é' }, body };
    const apart = encodeReplyApart(reply)!;
    const back = decodeReplyApart<{ status: number; headers: Record<string, string>; body: JsonText }>(
      apart.payload,
      apart.bodyAt,
    );
    expect(back.status).toBe(201);
    expect(back.headers).toEqual({ location: '/a/é' });
    expect(back.body).toBeInstanceOf(JsonText);
    expect(back.body.text).toBe(JSON.stringify(body));
    expect(JSON.stringify(back)).toBe(JSON.stringify(reply));
    const array = encodeReplyApart({ status: 200, body: [body] })!;
    expect(decodeReplyApart<{ body: JsonText }>(array.payload, array.bodyAt).body.text).toBe(JSON.stringify([body]));
  });

  it('is not used for a reply that is not an HTTP reply with an object or array body', () => {
    for (const value of [
      undefined,
      null,
      'text',
      5,
      { status: 200 },
      { status: 200, body: 'x' },
      { status: '200', body: {} },
    ])
      expect(encodeReplyApart(value)).toBeUndefined();
  });

  it('refuses a body start outside the payload', () => {
    const apart = encodeReplyApart({ status: 200, body: {} })!;
    expect(() => decodeReplyApart(apart.payload, apart.payload.length + 1)).toThrow(/starts at byte/);
    expect(() => decodeReplyApart(apart.payload, Number.NaN)).toThrow(/starts at byte/);
  });
});
