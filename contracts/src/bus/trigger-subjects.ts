import type { HttpCall, HttpReply } from '../http/http-route.js';
import type { EventFamilySpec } from './message-spec.js';
import type { PublishedEventEnvelope } from './event-subjects.js';
import { EVENTS_STREAM } from './event-subjects.js';
import { request } from './message-spec.js';

/** Subjects behind the trigger service's public HTTP routes (contracts/src/http/trigger-routes.ts). */
export const triggerHttp = {
  webhook: request<HttpCall, HttpReply>('weft.trigger.http.process.webhook', ['gateway'], 'trigger'),
  listeners: request<HttpCall, HttpReply>('weft.trigger.http.process.listeners', ['gateway'], 'trigger'),
};

/**
 * Process events (weft.events.process.<org>.<process>.<type>): the trigger service starts and stops
 * listeners on ProcessStarted / ProcessStopped and refreshes them when a running process's graph changes.
 */
export const processEvents: EventFamilySpec<[organizationId: string, processId?: string], PublishedEventEnvelope> = {
  kind: 'event',
  stream: EVENTS_STREAM,
  wildcard: 'weft.events.process.>',
  subject: (organizationId, processId) => `weft.events.process.${organizationId}.${processId ?? '*'}.*`,
  publishedBy: 'event-store',
  subscribedBy: ['trigger'],
};
