import { allEvents, type PublishedEventEnvelope } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { EventPublisher } from '@weft/event-store';

/**
 * Embedded mode: the outbox relay publishes to the in-memory bus. Nothing outlives the process
 * there, so the relay's own checkpoint is the only resume point (lastPublishedPosition is what
 * this process published).
 */
export class BusEventPublisher implements EventPublisher {
  private last = 0;
  private streamReady: Promise<void> | undefined;

  constructor(private readonly bus: Bus) {}

  async publish(
    subject: string,
    envelope: PublishedEventEnvelope,
    msgId: string,
    _previousMsgId?: string,
    json?: string,
  ): Promise<void> {
    this.streamReady ??= this.bus.ensureEventStream(allEvents);
    await this.streamReady;
    await this.bus.publish(subject, envelope, { msgId, json });
    this.last = Math.max(this.last, envelope.position);
  }

  async lastPublishedPosition(): Promise<number> {
    return this.last;
  }
}
