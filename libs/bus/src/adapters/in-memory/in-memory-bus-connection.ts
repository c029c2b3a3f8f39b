import type { RequestSpec, WorkQueueSpec } from '@weft/contracts';
import type {
  Bus,
  ConsumeOptions,
  EventStreamSpec,
  MessageContext,
  PublishedEvent,
  SendOptions,
  Subscription,
  WorkMessage,
  PublishOptions,
} from '../../bus.js';

/**
 * One service's view of a shared in-memory bus, like one NATS connection: closing it stops only
 * the subscriptions made through it. Embedded mode gives each service its own.
 */
export class InMemoryBusConnection implements Bus {
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  constructor(private readonly shared: Bus) {}

  request<Req, Res>(spec: RequestSpec<Req, Res>, payload: Req, options?: SendOptions): Promise<Res> {
    this.assertOpen();
    return this.shared.request(spec, payload, options);
  }

  serve<Req, Res>(
    spec: RequestSpec<Req, Res>,
    handler: (payload: Req, context: MessageContext) => Promise<Res>,
  ): Promise<Subscription> {
    this.assertOpen();
    return this.track(this.shared.serve(spec, handler));
  }

  ensureEventStream(spec: EventStreamSpec): Promise<void> {
    return this.shared.ensureEventStream(spec);
  }

  publish(subject: string, payload: unknown, options: PublishOptions): Promise<void> {
    this.assertOpen();
    return this.shared.publish(subject, payload, options);
  }

  hasEventInterest(subject: string): boolean {
    return this.shared.hasEventInterest?.(subject) ?? true;
  }

  subscribe(
    filter: string,
    options: { durable: string },
    handler: (event: PublishedEvent) => Promise<void>,
  ): Promise<Subscription> {
    this.assertOpen();
    return this.track(this.shared.subscribe(filter, options, handler));
  }

  enqueue<P>(spec: WorkQueueSpec<P>, payload: P, options?: SendOptions & { msgId?: string }): Promise<void> {
    this.assertOpen();
    return this.shared.enqueue(spec, payload, options);
  }

  consume<P>(
    spec: WorkQueueSpec<P>,
    options: ConsumeOptions<P>,
    handler: (message: WorkMessage<P>) => Promise<void>,
  ): Promise<Subscription> {
    this.assertOpen();
    return this.track(this.shared.consume(spec, options, handler));
  }

  async isReady(): Promise<boolean> {
    return !this.closed && (await this.shared.isReady());
  }

  async close(): Promise<void> {
    this.closed = true;
    const subscriptions = [...this.subscriptions];
    this.subscriptions.clear();
    await Promise.all(subscriptions.map((subscription) => subscription.unsubscribe()));
  }

  private async track(subscribing: Promise<Subscription>): Promise<Subscription> {
    const subscription = await subscribing;
    this.subscriptions.add(subscription);
    return {
      unsubscribe: async () => {
        this.subscriptions.delete(subscription);
        await subscription.unsubscribe();
      },
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('this bus connection is closed');
  }
}
