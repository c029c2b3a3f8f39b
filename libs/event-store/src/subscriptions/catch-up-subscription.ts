import type { StoredEvent, SubscribeOptions, SubscriptionHandle } from '../event-store.js';
import type { PostgresEventStore } from '../adapters/postgres/postgres-event-store.js';
import { CatchUpLoop } from './catch-up-loop.js';
import { loadCheckpoint, saveCheckpoint } from './checkpoint-table.js';

/**
 * A durable subscription: at-least-once, in position order. The checkpoint is stored after each
 * batch (and up to the last handled event when the handler throws), so a crash redelivers at
 * most the batch in hand. Run one instance per name.
 */
export function startSubscription(
  store: PostgresEventStore,
  name: string,
  handler: (event: StoredEvent) => Promise<void>,
  options: SubscribeOptions = {},
): SubscriptionHandle {
  const table = 'subscription_checkpoints';
  const loop = new CatchUpLoop({
    store,
    eventTypes: options.eventTypes,
    batchSize: options.batchSize ?? 100,
    pollMs: options.pollMs ?? 500,
    loadCheckpoint: () => loadCheckpoint(store.db, table, name),
    handleBatch: async (events, reached) => {
      let handled = loop.position;
      for (const event of events) {
        try {
          await handler(event);
        } catch (error) {
          if (handled > loop.position) await saveCheckpoint(store.db, table, name, handled);
          options.onError?.(error, event);
          throw error;
        }
        handled = event.position;
      }
      await saveCheckpoint(store.db, table, name, reached);
    },
  });
  loop.start();
  return {
    name,
    stop: () => loop.stop(),
    waitForPosition: (position) => loop.waitForPosition(position),
  };
}
