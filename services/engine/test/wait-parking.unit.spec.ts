import { WaitParking } from '../src/application/wait-parking.js';

/** When a run may leave memory: only once every running node is a long wait, never early. */
describe('wait parking', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const now = (): Date => t0;
  const at = (seconds: number): Date => new Date(t0.getTime() + seconds * 1000);
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  const setup = (running: { count: number }, deadlineSeconds = 100_000) => {
    const parked: Date[] = [];
    const controller = new AbortController();
    const parking = new WaitParking({
      parkAfterMs: 60_000,
      now,
      deadline: at(deadlineSeconds),
      runningNodes: () => running.count,
      park: (dueAt) => {
        parked.push(dueAt);
        controller.abort(new Error('parked'));
      },
    });
    const sleep = (seconds: number) => parking.sleep(at(seconds), controller.signal).catch(() => undefined);
    return { parking, parked, sleep, stop: () => controller.abort(new Error('test over')) };
  };

  test('two long waits and nothing else running: parked until the sooner one', async () => {
    const { parked, sleep } = setup({ count: 2 });
    void sleep(3600);
    void sleep(600);
    await tick();
    expect(parked).toEqual([at(600)]);
  });

  test('a node still working keeps the run in memory; once it finishes the wait parks it', async () => {
    const running = { count: 2 };
    const { parking, parked, sleep } = setup(running);
    void sleep(3600);
    await tick();
    expect(parked).toEqual([]);
    running.count = 1;
    parking.nodeFinished();
    await tick();
    expect(parked).toEqual([at(3600)]);
  });

  test('a short wait is not parked, and the execution deadline bounds the due time', async () => {
    const short = setup({ count: 1 });
    void short.sleep(59);
    await tick();
    expect(short.parked).toEqual([]);
    short.stop();
    const bounded = setup({ count: 1 }, 900);
    void bounded.sleep(30 * 24 * 3600);
    await tick();
    expect(bounded.parked).toEqual([at(900)]);
  });
});
