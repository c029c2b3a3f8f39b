import { retryDelayMs } from '../src/bus-defaults.js';

describe('retryDelayMs', () => {
  it('doubles per delivery from the base delay and caps at one minute', () => {
    expect([1, 2, 3, 4].map((delivery) => retryDelayMs(100, delivery))).toEqual([100, 200, 400, 800]);
    expect(retryDelayMs(1_000, 30)).toBe(60_000);
  });
});
