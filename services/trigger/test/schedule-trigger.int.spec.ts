import { ScheduleClock } from './support/schedule-clock.js';
import {
  catalogOf,
  eachTestEventStore,
  QueuedRequests,
  scheduledProcess,
  scheduleSupervisor,
} from './support/schedule-rig.js';

/**
 * The scheduled input on a real event store (PGlite) with a hand-moved clock: ticks in the node's
 * zone across DST changes, one firing per tick across replicas, the latest missed tick after a restart.
 */
describe('scheduled trigger', () => {
  const events = eachTestEventStore();

  test("'0 9 * * 1-5' in Europe/Berlin fires at 09:00 local before and after the clocks go forward", async () => {
    const clock = new ScheduleClock('2026-03-27T06:00:00Z'); // Friday 07:00 CET
    const process = scheduledProcess({
      cronExpression: '0 9 * * 1-5',
      timezone: 'Europe/Berlin',
      body: { report: 'daily' },
    });
    const queue = new QueuedRequests();
    const supervisor = scheduleSupervisor({ store: events.store, clock, catalog: catalogOf(process), queue });
    await supervisor.reconcile(process.id);
    await clock.sleeping(1);
    expect(supervisor.statusBoard.of(process.id, 'tick')).toMatchObject({
      state: 'listening',
      next_run_at: '2026-03-27T08:00:00.000Z',
    });
    clock.set('2026-03-27T08:00:00Z');
    await clock.sleeping(1);
    // Next is Monday: 09:00 CEST is 07:00 UTC (the clocks went forward on Sunday the 29th).
    expect(supervisor.statusBoard.of(process.id, 'tick')?.next_run_at).toBe('2026-03-30T07:00:00.000Z');
    clock.set('2026-03-30T07:00:00Z');
    await clock.sleeping(1);
    expect(queue.triggeredAt()).toEqual(['2026-03-27T09:00:00.000+01:00', '2026-03-30T09:00:00.000+02:00']);
    expect(queue.requests[0]).toMatchObject({
      processId: process.id,
      inputNodeId: 'tick',
      source: 'trigger',
      inputData: { cron_expression: '0 9 * * 1-5', report: 'daily' },
    });
    await supervisor.stopAll();
  });

  test('a 02:30 daily in America/New_York fires once on the spring-forward day, at 03:30 EDT', async () => {
    const clock = new ScheduleClock('2026-03-07T12:00:00Z');
    const process = scheduledProcess({ cronExpression: '30 2 * * *', timezone: 'America/New_York' });
    const queue = new QueuedRequests();
    const supervisor = scheduleSupervisor({ store: events.store, clock, catalog: catalogOf(process), queue });
    await supervisor.reconcile(process.id);
    for (const at of ['2026-03-08T07:30:00Z', '2026-03-09T06:30:00Z']) {
      await clock.sleeping(1);
      clock.set(at);
    }
    await clock.sleeping(1);
    expect(queue.triggeredAt()).toEqual(['2026-03-08T03:30:00.000-04:00', '2026-03-09T02:30:00.000-04:00']);
    await supervisor.stopAll();
  });

  test('a 01:30 daily in America/New_York fires once on the fall-back day, when 01:30 comes twice', async () => {
    const clock = new ScheduleClock('2026-10-31T12:00:00Z');
    const process = scheduledProcess({ cronExpression: '30 1 * * *', timezone: 'America/New_York' });
    const queue = new QueuedRequests();
    const supervisor = scheduleSupervisor({ store: events.store, clock, catalog: catalogOf(process), queue });
    await supervisor.reconcile(process.id);
    // 05:30Z is 01:30 EDT; 06:30Z is 01:30 EST, the repeated hour.
    for (const at of ['2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z', '2026-11-02T06:30:00Z']) {
      await clock.sleeping(1);
      clock.set(at);
    }
    await clock.sleeping(1);
    expect(queue.triggeredAt()).toEqual(['2026-11-01T01:30:00.000-04:00', '2026-11-02T01:30:00.000-05:00']);
    await supervisor.stopAll();
  });

  test('two replicas over one store fire each tick exactly once', async () => {
    const clock = new ScheduleClock('2026-05-04T10:00:30Z');
    const process = scheduledProcess({ cronExpression: '* * * * *' });
    const catalog = catalogOf(process);
    const queues = [new QueuedRequests(), new QueuedRequests()];
    const replicas = queues.map((queue) => scheduleSupervisor({ store: events.store, clock, catalog, queue }));
    await Promise.all(replicas.map((replica) => replica.reconcile(process.id)));
    for (const minute of ['01', '02', '03', '04', '05']) {
      await clock.sleeping(2);
      clock.set(`2026-05-04T10:${minute}:00Z`);
    }
    await clock.sleeping(2);
    const fired = queues.flatMap((queue) => queue.requests);
    expect(fired.map((request) => (request.inputData as { triggered_at: string }).triggered_at).sort()).toEqual([
      '2026-05-04T10:01:00.000+00:00',
      '2026-05-04T10:02:00.000+00:00',
      '2026-05-04T10:03:00.000+00:00',
      '2026-05-04T10:04:00.000+00:00',
      '2026-05-04T10:05:00.000+00:00',
    ]);
    await Promise.all(replicas.map((replica) => replica.stopAll()));
  });

  test('after everything was down the latest missed tick fires once; after a stop of the process none does', async () => {
    const clock = new ScheduleClock('2026-05-04T08:30:00Z');
    const process = scheduledProcess({ cronExpression: '0 * * * *' });
    const catalog = catalogOf(process);
    const before = new QueuedRequests();
    const first = scheduleSupervisor({ store: events.store, clock, catalog, queue: before });
    await first.reconcile(process.id);
    await clock.sleeping(1);
    clock.set('2026-05-04T09:00:00Z');
    await clock.sleeping(1);
    await first.stopAll(); // the service goes down; the process still runs
    expect(before.triggeredAt()).toEqual(['2026-05-04T09:00:00.000+00:00']);

    clock.set('2026-05-04T13:20:00Z'); // 10:00 ... 13:00 were missed
    const after = new QueuedRequests();
    const restarted = scheduleSupervisor({ store: events.store, clock, catalog, queue: after });
    await restarted.restoreAll();
    await clock.sleeping(1);
    const newExecutions = after.executionIds().filter((id) => !before.executionIds().includes(id));
    expect(newExecutions).toHaveLength(1);
    expect(after.requests.find((request) => request.executionId === newExecutions[0])?.inputData).toMatchObject({
      triggered_at: '2026-05-04T13:00:00.000+00:00',
    });

    catalog.setRunning(false); // ProcessStopped
    await restarted.reconcile(process.id);
    clock.set('2026-05-04T16:10:00Z');
    catalog.setRunning(true); // started again later: the ticks while stopped are not owed
    const again = new QueuedRequests();
    const third = scheduleSupervisor({ store: events.store, clock, catalog, queue: again });
    await third.reconcile(process.id);
    await clock.sleeping(1);
    expect(again.requests).toEqual([]);
    await third.stopAll();
  });
});
