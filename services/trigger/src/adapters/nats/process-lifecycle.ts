import { allEvents, processEvents, streamCategory, streamKey, type PublishedEventEnvelope } from '@weft/contracts';
import type { Bus, Subscription } from '@weft/bus';
import type { ListenerSupervisor } from '../../application/listener-supervisor.js';

/** Events after which a process's listeners may have to start, stop or be rebuilt. */
const LIFECYCLE_EVENTS = new Set(['ProcessStarted', 'ProcessStopped', 'ProcessDeleted']);
const GRAPH_EVENTS = new Set(['NodeAdded', 'NodeUpdated', 'NodeDeleted', 'GraphReplaced', 'VersionRestored']);

/**
 * Follows process events with this replica's own durable consumer (every replica runs every
 * listener; ticks and emails are claimed in the store): ProcessStarted/Stopped reconcile the process,
 * a graph change reconciles it when it runs here.
 */
export async function followProcessLifecycle(
  bus: Bus,
  supervisor: ListenerSupervisor,
  durable: string,
): Promise<Subscription> {
  // The whole events stream (not just process subjects): whoever creates it first defines its subjects.
  await bus.ensureEventStream(allEvents);
  return bus.subscribe(processEvents.wildcard, { durable }, async (event) => {
    const envelope = event.payload as PublishedEventEnvelope;
    if (!envelope?.streamId || streamCategory(envelope.streamId) !== 'process') return;
    const processId = streamKey(envelope.streamId);
    const relevant =
      LIFECYCLE_EVENTS.has(envelope.type) ||
      (GRAPH_EVENTS.has(envelope.type) && supervisor.processOf(processId) !== undefined);
    if (relevant) await supervisor.reconcile(processId);
  });
}
