import { ProblemError } from '@weft/contracts';
import { encodeJson } from '../src/json-payload.js';
import { jsonCopyWithin } from '../src/message-size.js';

describe('a payload longer than a JavaScript string', () => {
  // 34 references to one 16 MiB string: over 512 MiB of JSON, which JSON.stringify cannot make.
  const text = 'p'.repeat(16 * 1024 * 1024);
  const payload = Array.from({ length: 34 }, () => text);

  test('is a 413 problem on NATS, not a RangeError that answers 500', () => {
    let thrown: unknown;
    try {
      encodeJson(payload);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProblemError);
    expect((thrown as ProblemError).problem).toMatchObject({
      status: 413,
      detail: 'The message is too large for the bus (more than a JavaScript string holds).',
    });
  });

  test('is a 413 problem on the in-memory bus too', () => {
    expect(() => jsonCopyWithin(payload, 8 * 1024 * 1024, 'reply')).toThrow(
      'The reply is too large for the bus (more than a JavaScript string holds; at most 8388608).',
    );
  });
});
