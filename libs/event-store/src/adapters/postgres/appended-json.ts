import type { StoredEvent } from '../../event-store.js';

/** The JSON texts of an event's data and metadata as its append sent them, or as a read got them. */
interface AppendedJson {
  data: string;
  metadata: string;
}

/**
 * Kept per appended event object that a started relay may publish (`keepAppendedJsonFor` of the
 * store), and per event read as text, so the outbox relay publishes this process's own appends
 * without encoding their data a second time (a run's events carry its input and every node's
 * output). Weak: an event's texts go when the relay lets go of the event.
 */
const appended = new WeakMap<StoredEvent, AppendedJson>();

export function rememberAppendedJson(event: StoredEvent, data: string, metadata: string): void {
  appended.set(event, { data, metadata });
}

export const appendedJsonOf = (event: StoredEvent): AppendedJson | undefined => appended.get(event);
