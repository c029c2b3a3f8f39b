import type { ListenerContext, ListenerFactory } from '../src/application/listener-port.js';
import { ScheduleClock } from './support/schedule-clock.js';
import {
  catalogOf,
  eachTestEventStore,
  QueuedRequests,
  scheduledProcess,
  scheduleSupervisor,
} from './support/schedule-rig.js';

/**
 * The supervisor keeps listeners apart: one that cannot start or fails while running is reported
 * (state, last error) and retried at the next resync, and never stops the others; after a stop
 * no listener can start an execution.
 */
describe('listener supervisor', () => {
  const events = eachTestEventStore();

  test('a mail listener that cannot start is failing and retried; the schedule beside it keeps firing', async () => {
    const clock = new ScheduleClock('2026-05-04T10:00:30Z');
    const process = scheduledProcess({ cronExpression: '* * * * *' });
    process.nodes.push({
      id: 'mail',
      type: 'inputNode',
      position: { x: 0, y: 0 },
      config: { label: 'Inbox', triggerType: 'gmail', connectionId: 'c1' },
    });
    let providerDown = true;
    let mailContext: ListenerContext | undefined;
    const gmail: ListenerFactory = (context) => ({
      async start() {
        if (providerDown) throw new Error('provider down (503)');
        mailContext = context;
      },
      async stop() {},
    });
    const queue = new QueuedRequests();
    const supervisor = scheduleSupervisor({
      store: events.store,
      clock,
      catalog: catalogOf(process),
      queue,
      factories: { gmail },
    });
    await supervisor.restoreAll();
    await clock.sleeping(1);
    expect(supervisor.statusBoard.of(process.id, 'mail')).toMatchObject({
      state: 'failing',
      last_error: { message: 'could not start: provider down (503)' },
    });
    clock.set('2026-05-04T10:01:00Z');
    await clock.sleeping(1);
    expect(queue.executionIds()).toHaveLength(1);

    providerDown = false;
    await supervisor.restoreAll(); // the periodic resync
    expect(supervisor.statusBoard.of(process.id, 'mail')?.state).toBe('listening');
    // A run-time error is shown with its time and does not stop the listener.
    mailContext!.report({
      state: 'backing_off',
      lastError: { message: 'rate limited (429)', at: clock.now().toISOString() },
    });
    expect(supervisor.statusBoard.of(process.id, 'mail')).toMatchObject({
      state: 'backing_off',
      last_error: { message: 'rate limited (429)' },
    });
    clock.set('2026-05-04T10:02:00Z');
    await clock.sleeping(1);
    expect(queue.executionIds()).toHaveLength(2);

    await supervisor.stopAll();
    await expect(mailContext!.fire({ id: 'late email' }, { dedupeKey: 'late' })).rejects.toMatchObject({ status: 409 });
    expect(queue.requests.some((request) => (request.inputData as { id?: string }).id === 'late email')).toBe(false);
  });

  test('a replica that missed ProcessStopped starts nothing at the next tick and stops its listener', async () => {
    const clock = new ScheduleClock('2026-05-04T10:00:30Z');
    const process = scheduledProcess({ cronExpression: '* * * * *' });
    const catalog = catalogOf(process);
    const queue = new QueuedRequests();
    const supervisor = scheduleSupervisor({ store: events.store, clock, catalog, queue });
    await supervisor.restoreAll();
    await clock.sleeping(1);
    catalog.setRunning(false); // stopped in the catalog; this replica never got the event
    clock.set('2026-05-04T10:01:00Z');
    await clock.sleeping(1); // the tick was handled: the listener waits again
    expect(supervisor.statusBoard.of(process.id, 'tick')?.last_error?.message).toContain('is not running');
    await supervisor.reconcile(process.id); // queued behind the one the refused firing started
    expect(queue.requests).toEqual([]);
    expect(supervisor.processOf(process.id)).toBeUndefined();
    expect(supervisor.statusBoard.of(process.id, 'tick')?.state).toBe('stopped');
  });
});
