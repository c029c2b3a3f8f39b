import { waitUntil } from './wait-until.js';

describe('waitUntil', () => {
  test('resolves once the condition holds', async () => {
    let calls = 0;
    await waitUntil(() => ++calls === 3, 1000, 1);
    expect(calls).toBe(3);
  });

  test('throws when the condition never holds, so the test fails there and not later', async () => {
    await expect(waitUntil(() => false, 30, 5)).rejects.toThrow(/still false after 30 ms/);
  });
});
