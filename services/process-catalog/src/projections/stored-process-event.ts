import type { StoredEvent } from '@weft/event-store';
import { PROCESS_EVENT_TYPES, type ProcessEvent } from '../domain/process/events.js';

/** Process events are the ones on `process-<id>` streams; other services may reuse a type name. */
export const isProcessStream = (streamId: string): boolean => streamId.startsWith('process-');

export function toProcessEvent(event: StoredEvent): ProcessEvent | undefined {
  if (!isProcessStream(event.streamId)) return undefined;
  if (!(PROCESS_EVENT_TYPES as readonly string[]).includes(event.type)) return undefined;
  return { type: event.type, data: event.data } as ProcessEvent;
}
