import type { PublishedEventEnvelope } from '@weft/contracts';

/** Where the outbox relay publishes committed events: JetStream, or an in-memory bus when embedded. */
export interface EventPublisher {
  /** Resolves once the message is stored; `msgId` deduplicates a repeated publish. */
  publish(subject: string, envelope: PublishedEventEnvelope, msgId: string): Promise<void>;
  /** Position of the last event stored at the destination, 0 when none. */
  lastPublishedPosition(): Promise<number>;
}

/** Header carrying the event's position, read back on restart to know where to resume. */
export const POSITION_HEADER = 'Weft-Position';

/** The deduplication id of an event's message: one per position. */
export const eventMessageId = (position: number): string => `weft-event-${position}`;
