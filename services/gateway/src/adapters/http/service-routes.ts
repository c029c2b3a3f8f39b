import type { HttpRoute } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { RouteBinding } from './route-binding.js';

/** Every service route is answered by its owning service over the bus, with the caller as actor. */
export function serviceRouteBindings(routes: readonly HttpRoute[], bus: Bus, timeoutMs: number): RouteBinding[] {
  return routes.map((route) => ({
    route,
    handle: (call, actor, request) =>
      bus.request(route.spec, call, {
        actor,
        correlationId: request.id,
        timeoutMs,
        // Sent as the bus has it (server.ts): not decoded into objects only to be encoded again.
        replyBodyAsJsonText: true,
      }),
  }));
}
