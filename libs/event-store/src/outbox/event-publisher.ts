import type { PublishedEventEnvelope } from '@weft/contracts';

/** Where the outbox relay publishes committed events: JetStream, or an in-memory bus when embedded. */
export interface EventPublisher {
  /**
   * True when `publish` honours `previousMsgId` (JetStream does): the relay then pipelines a whole
   * batch. Otherwise it publishes one message at a time, which keeps order without that help.
   */
  readonly enforcesPreviousMsgId?: boolean;
  /**
   * Resolves once the message is stored; `msgId` deduplicates a repeated publish. When
   * `previousMsgId` is given, the destination must refuse the message unless its last stored
   * message has that id: the relay pipelines publishes, and this keeps them gap-free and in order.
   */
  publish(subject: string, message: EventMessage, msgId: string, previousMsgId?: string): Promise<PublishOutcome>;
  /**
   * Sends a message without waiting for the destination to acknowledge it (JetStream offers it):
   * the relay then sends each batch this way up to its last message, whose acknowledged `publish`
   * names its predecessor, so its success proves every message before it was stored, in order.
   * Throws PermanentPublishError at once for a message that could never be stored.
   */
  send?(subject: string, message: EventMessage, msgId: string, previousMsgId?: string): void;
  /**
   * False when a message on `subject` would be kept for no one (a stream with interest retention
   * and no consumer taking it): the relay then neither builds nor publishes it. Only for a
   * publisher that does not enforce `previousMsgId` (a skipped message would break the chain).
   */
  interested?(subject: string): boolean;
  /** Position of the last event stored at the destination, 0 when none. */
  lastPublishedPosition(): Promise<number>;
}

/**
 * What the destination said of a stored message: `duplicate` when it had it already (its msg id
 * within the dedupe window), which JetStream acknowledges before checking any expectation.
 */
export interface PublishOutcome {
  duplicate?: boolean;
}

/**
 * An event as published: its envelope's JSON text (a `PublishedEventEnvelope`), which the relay
 * writes once, mostly from the texts the append sent, and its position, the resume point.
 */
export interface EventMessage {
  position: number;
  json: string;
}

export const eventMessageOf = (envelope: PublishedEventEnvelope): EventMessage => ({
  position: envelope.position,
  json: JSON.stringify(envelope),
});

/** Header carrying the event's position, read back on restart to know where to resume. */
export const POSITION_HEADER = 'Weft-Position';

/** The deduplication id of an event's message: one per position. */
export const eventMessageId = (position: number): string => `weft-event-${position}`;

/**
 * A publish that can never succeed however often it is retried (the message exceeds the
 * destination's size limit): the relay publishes a placeholder for that position instead.
 */
export class PermanentPublishError extends Error {
  override name = 'PermanentPublishError';
}
