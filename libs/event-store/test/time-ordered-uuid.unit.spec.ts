import { timeOrderedUuid } from '../src/index.js';

const VERSION_7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit millisecond timestamp at the front of a version 7 id. */
const millisOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('timeOrderedUuid', () => {
  it('is an RFC 9562 version 7 UUID carrying the millisecond it was made in', () => {
    const at = Date.now() + 10_000_000;
    const id = timeOrderedUuid(at);
    expect(id).toMatch(VERSION_7);
    expect(millisOf(id)).toBe(at);
  });

  it('sorts later ids after earlier ones, within one millisecond and across many', () => {
    const start = Date.now() + 20_000_000;
    const ids: string[] = [];
    for (let i = 0; i < 3000; i++) ids.push(timeOrderedUuid(start + Math.floor(i / 1000)));
    expect(ids.every((id) => VERSION_7.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('borrows the next millisecond when one millisecond runs out of counter values, and stays ordered when the clock goes back', () => {
    const at = Date.now() + 30_000_000;
    const ids = Array.from({ length: 5000 }, () => timeOrderedUuid(at));
    // The counter starts below 2,048 and holds 4,096 values: 5,000 ids need a second millisecond.
    expect(millisOf(ids.at(-1)!)).toBe(at + 1);
    const afterClockWentBack = timeOrderedUuid(at - 60_000);
    expect(afterClockWentBack > ids.at(-1)!).toBe(true);
    expect([...ids].sort()).toEqual(ids);
  });

  it('varies in its random bits', () => {
    const at = Date.now() + 40_000_000;
    const tails = new Set(Array.from({ length: 100 }, () => timeOrderedUuid(at).slice(19)));
    expect(tails.size).toBe(100);
  });
});
