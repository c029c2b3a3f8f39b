import { ProblemError } from '@weft/contracts';
import { assertStorableCall } from '../src/application/storable-call.js';

/** Defence behind the gateway: a call reaching the testing service over the bus is checked again. */
describe('assertStorableCall', () => {
  const call = (body: unknown, query: Record<string, string> = {}) => ({
    params: { id: 'x' },
    query,
    body,
    headers: {},
  });
  const violations = (value: ReturnType<typeof call>) => {
    try {
      assertStorableCall(value);
      return [];
    } catch (error) {
      return (error as ProblemError).problem.errors?.map((violation) => violation.path) ?? [];
    }
  };

  it('names every NUL, lone surrogate and too-deep place in body, query and path', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 70; level += 1) deep = { d: deep };
    const found = violations(
      call({ inputData: { text: 'a\u0000b', ['k\u0000']: 1, half: '\uD800x', deep } }, { tag: 'a\u0000' }),
    );
    expect(found).toHaveLength(5);
    expect(found).toEqual(
      expect.arrayContaining([
        '/inputData/text',
        '/inputData/k\u0000',
        '/inputData/half',
        expect.stringMatching(/^\/inputData\/deep(\/d)+$/),
        '/query/tag',
      ]),
    );
  });

  it('lets ordinary input through, surrogate pairs included', () => {
    expect(violations(call({ inputData: { emoji: '😀', text: 'plain' } }, { tag: 'smoke' }))).toEqual([]);
  });
});
