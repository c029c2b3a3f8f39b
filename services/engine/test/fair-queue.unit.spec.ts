import { AbortableSemaphore } from '../src/adapters/nodes/abortable-semaphore.js';
import { FairQueue } from '../src/adapters/nodes/fair-queue.js';

describe('FairQueue: waiters in turn by owner', () => {
  test("owners take turns; each owner's waiters keep their order", () => {
    const queue = new FairQueue<string>();
    for (const item of ['a1', 'a2', 'a3']) queue.push('a', item);
    queue.push('b', 'b1');
    queue.push('c', 'c1');
    queue.push('b', 'b2');
    const order: string[] = [];
    while (queue.size > 0) order.push(queue.shift()!);
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(queue.shift()).toBeUndefined();
  });

  test('a removed waiter is never served; an owner left without waiters loses its turn', () => {
    const queue = new FairQueue<string>();
    queue.push('a', 'a1');
    queue.push('b', 'b1');
    queue.push('a', 'a2');
    expect(queue.remove('b', 'b1')).toBe(true);
    expect(queue.remove('b', 'b1')).toBe(false);
    expect(queue.size).toBe(2);
    expect([queue.shift(), queue.shift()]).toEqual(['a1', 'a2']);
    queue.push('c', 'c1');
    expect(queue.drain()).toEqual(['c1']);
    expect(queue.size).toBe(0);
  });
});

describe('AbortableSemaphore', () => {
  const never = new AbortController().signal;

  test('turns go round the organizations; an aborted waiter leaves with its reason', async () => {
    const slots = new AbortableSemaphore(1);
    await slots.acquire(never, 'a');
    const granted: string[] = [];
    const wait = (name: string, owner: string, signal = never) =>
      slots.acquire(signal, owner).then(() => {
        granted.push(name);
      });
    const cancel = new AbortController();
    const waits = [wait('a2', 'a'), wait('a3', 'a'), wait('b1', 'b'), wait('c1', 'c', cancel.signal)];
    cancel.abort(new Error('gave up'));
    await expect(waits[3]).rejects.toThrow('gave up');
    expect(slots.queued).toBe(3);
    for (let turn = 0; turn < 3; turn++) {
      slots.release();
      await Promise.resolve();
    }
    await Promise.all(waits.slice(0, 3));
    expect(granted).toEqual(['a2', 'b1', 'a3']);
  });
});
