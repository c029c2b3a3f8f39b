import type { EventStore, ExpectedVersion, StoredEvent } from '../event-store.js';

interface FoldableEvent {
  type: string;
  data: unknown;
}

/**
 * Reads a stream and folds it into an aggregate's state: the first half of every command handler
 * (load -> decide -> append with `expectedVersion`). `eventTypes`, when given, skips other events.
 */
export async function foldStream<State, Event extends FoldableEvent>(
  store: EventStore,
  streamId: string,
  fold: { initial: State; evolve(state: State, event: Event): State; eventTypes?: readonly string[] },
): Promise<{ state: State; version: number; expectedVersion: ExpectedVersion; stored: StoredEvent[] }> {
  const stored = await store.readStream(streamId);
  const state = stored
    .filter((event) => !fold.eventTypes || fold.eventTypes.includes(event.type))
    .reduce((current, event) => fold.evolve(current, { type: event.type, data: event.data } as Event), fold.initial);
  const version = stored.at(-1)?.streamVersion ?? 0;
  return { state, version, expectedVersion: version === 0 ? 'no_stream' : version, stored };
}
