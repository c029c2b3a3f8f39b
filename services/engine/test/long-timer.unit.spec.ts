import { armTimer, MAX_TIMER_STEP_MS, sleepUntil } from '../src/application/long-timer.js';

/** setTimeout fires at once above 2^31-1 ms; the engine's timers must fire on time at any distance. */
describe('long timers', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  const DAY = 24 * 3600 * 1000;
  const clock = (): Date => new Date(Date.now());

  test('a 30-day timer fires after 30 days, not at once nor after 24.8 days', () => {
    const fired: Date[] = [];
    armTimer(new Date(Date.now() + 30 * DAY), clock, () => fired.push(clock()));
    jest.advanceTimersByTime(1);
    expect(fired).toHaveLength(0);
    jest.advanceTimersByTime(MAX_TIMER_STEP_MS);
    expect(fired).toHaveLength(0);
    jest.advanceTimersByTime(30 * DAY - MAX_TIMER_STEP_MS - 2);
    expect(fired).toHaveLength(0);
    jest.advanceTimersByTime(1);
    expect(fired).toEqual([new Date('2026-01-31T00:00:00Z')]);
  });

  test('a cancelled long timer never fires', () => {
    const fired: number[] = [];
    const cancel = armTimer(new Date(Date.now() + 40 * DAY), clock, () => fired.push(1));
    jest.advanceTimersByTime(MAX_TIMER_STEP_MS + 1);
    cancel();
    jest.advanceTimersByTime(40 * DAY);
    expect(fired).toHaveLength(0);
  });

  test('sleepUntil rejects with the abort reason and resolves at once for a past time', async () => {
    const controller = new AbortController();
    const sleeping = sleepUntil(new Date(Date.now() + 30 * DAY), clock, controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(sleeping).rejects.toThrow('cancelled');
    await expect(sleepUntil(new Date(Date.now() - 1), clock, new AbortController().signal)).resolves.toBeUndefined();
  });
});
