import type { Actor } from '@weft/bus';

/** Who calls an application service, as the bus adapter hands it over. */
export interface Caller {
  actor: Actor;
  correlationId?: string;
  traceId?: string;
}

/** The clock and id source, injected so tests and replays can pin them. */
export interface Runtime {
  now(): string;
  newId(): string;
}
