import { conflict } from '@weft/contracts';
import {
  foldStream,
  WrongExpectedVersionError,
  type EventMetadata,
  type EventStore,
  type StoredEvent,
} from '@weft/event-store';

interface DomainEvent {
  type: string;
  data: unknown;
}

export interface Aggregate<State, Event extends DomainEvent, Command> {
  initial: State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}

/**
 * Load a stream, fold it, decide, and append with the version it was read at: a concurrent
 * writer makes the append fail, which answers 409 instead of losing either write.
 */
export async function runAggregateCommand<State, Event extends DomainEvent, Command>(
  store: EventStore,
  streamId: string,
  aggregate: Aggregate<State, Event, Command>,
  command: Command,
  metadata: EventMetadata,
): Promise<StoredEvent[]> {
  const { state, expectedVersion } = await foldStream(store, streamId, aggregate);
  const events = aggregate.decide(command, state);
  if (events.length === 0) return [];
  try {
    const result = await store.append(
      streamId,
      events.map((event) => ({ type: event.type, data: event.data, metadata })),
      { expectedVersion },
    );
    return result.events;
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) {
      throw conflict(`${streamId} was changed concurrently; reload and retry`);
    }
    throw error;
  }
}
