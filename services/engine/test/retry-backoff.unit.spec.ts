import { defaultRetryDelay } from '../src/application/execution-engine.js';

describe('the default retry backoff (docs/engine.md: 1 s, doubled for each attempt, up to 60 s)', () => {
  test('retry 2 waits 1 s, each next retry twice as long, never more than 60 s', () => {
    const attempts = [2, 3, 4, 5, 6, 7, 8, 9, 50];
    expect(attempts.map(defaultRetryDelay)).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });
});
