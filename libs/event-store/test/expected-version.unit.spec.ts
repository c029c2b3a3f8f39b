import { checkExpectedVersion } from '../src/adapters/postgres/expected-version.js';
import { WrongExpectedVersionError, type ExpectedVersion } from '../src/index.js';

describe('checkExpectedVersion', () => {
  const cases: [ExpectedVersion | undefined, number, boolean][] = [
    [undefined, 0, true],
    ['any', 7, true],
    ['no_stream', 0, true],
    ['no_stream', 1, false],
    ['stream_exists', 0, false],
    ['stream_exists', 2, true],
    [0, 0, true],
    [3, 3, true],
    [3, 4, false],
    [3, 2, false],
  ];
  it.each(cases)('expected %p at actual %p passes: %p', (expected, actual, passes) => {
    const check = () => checkExpectedVersion('s-1', expected, actual);
    if (passes) expect(check).not.toThrow();
    else expect(check).toThrow(WrongExpectedVersionError);
  });
});
