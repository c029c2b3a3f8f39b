import { AppendSignal } from '../src/index.js';

describe('AppendSignal', () => {
  it('returns at once when an append happened after the generation the caller saw', async () => {
    const signal = new AppendSignal();
    const seen = signal.current;
    signal.notify();
    let woke = false;
    await signal.wait(seen, 60_000).then(() => (woke = true));
    expect(woke).toBe(true);
  });

  it('wakes a waiter on notify and on interrupt', async () => {
    const signal = new AppendSignal();
    const first = signal.wait(signal.current, 60_000);
    signal.notify();
    await expect(first).resolves.toBeUndefined();
    const interrupt = new AbortController();
    const second = signal.wait(signal.current, 60_000, interrupt.signal);
    interrupt.abort();
    await expect(second).resolves.toBeUndefined();
  });
});
