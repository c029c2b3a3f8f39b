import { BagLettingGo } from '../src/index.js';

describe('BagLettingGo', () => {
  it('holds each added value under its own key, twice when added twice, until that key removes it', () => {
    const bag = new BagLettingGo<string>();
    const first = bag.add('a');
    const second = bag.add('a');
    const third = bag.add('b');
    expect(new Set([first, second, third]).size).toBe(3);
    expect([bag.size, [...bag.values()]]).toEqual([3, ['a', 'a', 'b']]);
    expect(bag.delete(first)).toBe(true);
    expect(bag.delete(first)).toBe(false);
    expect([...bag.values()]).toEqual(['a', 'b']);
    bag.clear();
    expect([bag.size, [...bag.values()]]).toEqual([0, []]);
  });
});
