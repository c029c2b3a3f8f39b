import { KeyedSerializer } from '../src/application/keyed-serializer.js';

describe('KeyedSerializer', () => {
  test('tasks of one key take turns, even when one fails; other keys do not wait', async () => {
    const serializer = new KeyedSerializer();
    const log: string[] = [];
    let releaseFirst!: () => void;
    const first = serializer.run('org-a', async () => {
      log.push('a1 start');
      await new Promise<void>((resolve) => (releaseFirst = resolve));
      log.push('a1 end');
      throw new Error('a1 failed');
    });
    const second = serializer.run('org-a', async () => {
      log.push('a2');
      return 2;
    });
    const other = await serializer.run('org-b', async () => {
      log.push('b1');
      return 'b';
    });
    expect(other).toBe('b');
    expect(log).toEqual(['a1 start', 'b1']);
    releaseFirst();
    await expect(first).rejects.toThrow('a1 failed');
    await expect(second).resolves.toBe(2);
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
  });
});
