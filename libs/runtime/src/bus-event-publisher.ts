import { allEvents } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { EventMessage, EventPublisher, PublishOutcome } from '@weft/event-store';

/**
 * Embedded mode: the outbox relay publishes to the in-memory bus. Nothing outlives the process
 * there, so the relay's own checkpoint is the only resume point (lastPublishedPosition is what
 * this process published).
 */
export class BusEventPublisher implements EventPublisher {
  private last = 0;
  private streamReady: Promise<void> | undefined;

  constructor(private readonly bus: Bus) {}

  async publish(subject: string, message: EventMessage, msgId: string): Promise<PublishOutcome> {
    this.streamReady ??= this.bus.ensureEventStream(allEvents);
    await this.streamReady;
    // The JSON text is what goes out: the payload itself is not read when it is given.
    await this.bus.publish(subject, undefined, { msgId, json: message.json });
    this.last = Math.max(this.last, message.position);
    return {};
  }

  /** The embedded bus keeps execution events only while an in-process durable takes them (infrastructure.ts). */
  interested(subject: string): boolean {
    return this.bus.hasEventInterest?.(subject) ?? true;
  }

  async lastPublishedPosition(): Promise<number> {
    return this.last;
  }
}
