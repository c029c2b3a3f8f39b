import { conflict } from '@weft/contracts';
import { foldStream, WrongExpectedVersionError, type EventStore, type StoredEvent } from '@weft/event-store';
import type { Caller, Runtime } from './caller.js';
import { KeyedSerializer } from './keyed-serializer.js';

/** A pure aggregate: its fold and its decider. */
export interface Decider<Command, Event extends { type: string; data: unknown }, State> {
  initial(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /** Event types of the aggregate; anything else on its stream is ignored. */
  eventTypes: readonly string[];
}

export interface StreamCommandResult<Event, State> {
  revision: number;
  events: Event[];
  state: State;
}

export async function loadStream<Command, Event extends { type: string; data: unknown }, State>(
  store: EventStore,
  streamId: string,
  decider: Decider<Command, Event, State>,
): Promise<{ state: State; version: number; stored: StoredEvent[] }> {
  const { state, version, stored } = await foldStream<State, Event>(store, streamId, {
    initial: decider.initial(),
    evolve: (state, event) => decider.evolve(state, event),
    eventTypes: decider.eventTypes,
  });
  return { state, version, stored };
}

export interface StreamCommandOptions<Command, Event extends { type: string; data: unknown }, State> {
  store: EventStore;
  runtime: Runtime;
  streamId: string;
  decider: Decider<Command, Event, State>;
  caller: Caller;
  command: Omit<Command, 'metadata'>;
  authorize(state: State): void;
  organizationIdOf(state: State): string;
}

const streamTurns = new KeyedSerializer();

/** How often a command is decided again when another append got in first. */
const ATTEMPTS = 5;

/**
 * Load -> authorize -> decide -> append with the loaded version. When a concurrent append got in
 * first (a collection renamed while a member is added, two members added at once), the command
 * is decided again on the new state, so nothing is lost and no idempotent write answers 409;
 * after a few rounds of contention it answers 409. `authorize` sees the state before the command
 * (throw 404/403 from it).
 */
export async function runStreamCommand<
  Command extends { metadata: unknown },
  Event extends { type: string; data: unknown },
  State,
>(options: StreamCommandOptions<Command, Event, State>): Promise<StreamCommandResult<Event, State>> {
  // Commands on one stream take turns in this process; the retries cover other processes.
  return streamTurns.run(options.streamId, async () => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await runOnce(options);
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        if (attempt >= ATTEMPTS) throw conflict(`${options.streamId} was changed concurrently; retry`);
      }
    }
  });
}

async function runOnce<Command extends { metadata: unknown }, Event extends { type: string; data: unknown }, State>(
  options: StreamCommandOptions<Command, Event, State>,
): Promise<StreamCommandResult<Event, State>> {
  const { store, runtime, streamId, decider, caller } = options;
  const { state, version } = await loadStream(store, streamId, decider);
  options.authorize(state);
  const metadata = { now: runtime.now(), actorId: caller.actor.userId, actorName: caller.actor.userName };
  const events = decider.decide({ ...options.command, metadata } as Command, state);
  const after = events.reduce((current, event) => decider.evolve(current, event), state);
  if (events.length === 0) return { revision: version, events, state };
  const result = await store.append(
    streamId,
    events.map((event) => ({
      type: event.type,
      data: event.data,
      metadata: {
        actorId: caller.actor.userId,
        actorName: caller.actor.userName,
        organizationId: options.organizationIdOf(after),
        ...(caller.correlationId ? { correlationId: caller.correlationId } : {}),
        ...(caller.traceId ? { traceId: caller.traceId } : {}),
      },
    })),
    { expectedVersion: version === 0 ? 'no_stream' : version },
  );
  return { revision: result.nextExpectedVersion, events, state: after };
}
