import type { ListenerFactory } from '../../application/listener-port.js';
import type { WebhookRegistry } from './webhook-registry.js';

/** A webhook listener is a registration: while it runs, the webhook route accepts requests for its node. */
export const webhookListenerFactory =
  (registry: WebhookRegistry): ListenerFactory =>
  (context) => ({
    async start() {
      registry.add(context);
      context.report({ state: 'listening', nextRunAt: null });
    },
    async stop() {
      registry.remove(context);
    },
  });
