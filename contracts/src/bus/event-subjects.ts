import type { EventFamilySpec } from './message-spec.js';

/**
 * Every committed event is published by the outbox relay on
 *   weft.events.<category>.<organizationId>.<key>.<EventType>
 * where <category> is the stream's prefix (`process`, `execution`, `organization`, `apikey` ...),
 * <key> is the process id for process and execution events (so a subscriber can filter by
 * process) and the aggregate id otherwise. Tokens that are missing are written as `_`.
 */
export const EVENTS_STREAM = 'WEFT_EVENTS';
const ROOT = 'weft.events';

export interface PublishedEventEnvelope {
  eventId: string;
  streamId: string;
  streamVersion: number;
  position: number;
  type: string;
  schemaVersion: number;
  data: unknown;
  metadata: Record<string, unknown>;
  recordedAt: string;
  /** Set when the event could not be published (too large): `data` is null, `reason` says why. */
  truncated?: true;
  reason?: string;
}

const token = (value: unknown): string =>
  typeof value === 'string' && value.length > 0 ? value.replace(/[.*>\s]/g, '_') : '_';

export const streamCategory = (streamId: string): string => {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
};

export const streamKey = (streamId: string): string => {
  const dash = streamId.indexOf('-');
  return dash === -1 ? '_' : streamId.slice(dash + 1);
};

/** The subject an event is published on; `metadata.processId` picks the key when present. */
export const eventSubject = (event: {
  streamId: string;
  type: string;
  metadata: { organizationId?: unknown; processId?: unknown };
}): string =>
  [
    ROOT,
    token(streamCategory(event.streamId)),
    token(event.metadata.organizationId),
    token(event.metadata.processId ?? streamKey(event.streamId)),
    token(event.type),
  ].join('.');

export const allEvents: EventFamilySpec<[], PublishedEventEnvelope> = {
  kind: 'event',
  stream: EVENTS_STREAM,
  wildcard: `${ROOT}.>`,
  subject: () => `${ROOT}.>`,
  publishedBy: 'event-store',
};

/** Execution events of one organization (and optionally one process): weft.events.execution.<org>.<process>.<type> */
export const executionEvents: EventFamilySpec<
  [organizationId: string, processId?: string, eventType?: string],
  PublishedEventEnvelope
> = {
  kind: 'event',
  stream: EVENTS_STREAM,
  wildcard: `${ROOT}.execution.>`,
  subject: (organizationId, processId, eventType) =>
    `${ROOT}.execution.${token(organizationId)}.${processId ? token(processId) : '*'}.${eventType ? token(eventType) : '*'}`,
  publishedBy: 'event-store',
};
