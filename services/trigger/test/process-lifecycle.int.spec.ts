import { allEvents, type PublishedEventEnvelope } from '@weft/contracts';
import { InMemoryBus } from '@weft/bus';
import { followProcessLifecycle } from '../src/adapters/nats/process-lifecycle.js';
import type { ListenerSupervisor } from '../src/application/listener-supervisor.js';

/** The trigger follows process events without narrowing the events stream other publishers need. */
describe('process lifecycle subscription', () => {
  test('a trigger that subscribes first leaves the events stream open to every event family', async () => {
    const bus = new InMemoryBus();
    const reconciled: string[] = [];
    const supervisor = {
      reconcile: async (processId: string) => void reconciled.push(processId),
      processOf: () => undefined,
    } as unknown as ListenerSupervisor;
    const subscription = await followProcessLifecycle(bus, supervisor, 'trigger-test');
    const envelope = (streamId: string, type: string): PublishedEventEnvelope => ({
      eventId: `${streamId}-${type}`,
      streamId,
      streamVersion: 1,
      position: 1,
      type,
      schemaVersion: 1,
      data: {},
      metadata: {},
      recordedAt: new Date().toISOString(),
    });
    await bus.ensureEventStream(allEvents);
    // The outbox relay publishes every family to the same stream; none may be refused.
    await bus.publish(
      'weft.events.organization.o1.o1.OrganizationCreated',
      envelope('organization-o1', 'OrganizationCreated'),
      {
        msgId: 'a',
      },
    );
    await bus.publish('weft.events.process.o1.p1.ProcessStarted', envelope('process-p1', 'ProcessStarted'), {
      msgId: 'b',
    });
    await bus.publish('weft.events.process.o1.p1.NodeUpdated', envelope('process-p1', 'NodeUpdated'), { msgId: 'c' });
    await subscription.unsubscribe();
    await bus.close();
    // ProcessStarted reconciles; an edit of a process not running here does not.
    expect(reconciled).toEqual(['p1']);
  });
});
