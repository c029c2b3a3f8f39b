import { ReadBatcher } from '../src/application/read-batcher.js';

/** A readMany whose calls are recorded and answered when the test says so. */
function controlledReads() {
  const calls: { keys: string[]; answer: (found: Map<string, number>) => void; fail: (error: Error) => void }[] = [];
  const readMany = (keys: string[]) =>
    new Promise<Map<string, number>>((resolve, reject) => calls.push({ keys, answer: resolve, fail: reject }));
  return { calls, readMany };
}

describe('ReadBatcher', () => {
  test('a read alone is sent at once; reads asked for meanwhile share the next statement', async () => {
    const { calls, readMany } = controlledReads();
    const batcher = new ReadBatcher(readMany);
    const first = batcher.read('a');
    expect(calls.map((call) => call.keys)).toEqual([['a']]);

    const later = [batcher.read('b'), batcher.read('c'), batcher.read('b')];
    expect(calls).toHaveLength(1);
    calls[0]!.answer(new Map([['a', 1]]));
    await expect(first).resolves.toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls.map((call) => call.keys)).toEqual([['a'], ['b', 'c']]);
    calls[1]!.answer(new Map([['b', 2]]));
    await expect(Promise.all(later)).resolves.toEqual([2, undefined, 2]);
  });

  test('a failed statement fails only its own reads; the next one goes on', async () => {
    const { calls, readMany } = controlledReads();
    const batcher = new ReadBatcher(readMany);
    const failing = batcher.read('a');
    const next = batcher.read('b');
    calls[0]!.fail(new Error('connection lost'));
    await expect(failing).rejects.toThrow('connection lost');
    await new Promise((resolve) => setImmediate(resolve));
    calls[1]!.answer(new Map([['b', 5]]));
    await expect(next).resolves.toBe(5);
  });

  test('no statement holds more than maxBatch keys', async () => {
    const { calls, readMany } = controlledReads();
    const batcher = new ReadBatcher(readMany, 2);
    const reads = ['a', 'b', 'c', 'd', 'e'].map((key) => batcher.read(key));
    for (let call = 0; call < 3; call++) {
      await new Promise((resolve) => setImmediate(resolve));
      calls[call]!.answer(new Map(calls[call]!.keys.map((key) => [key, key.charCodeAt(0)])));
    }
    await expect(Promise.all(reads)).resolves.toEqual([97, 98, 99, 100, 101]);
    expect(calls.map((call) => call.keys)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });
});
