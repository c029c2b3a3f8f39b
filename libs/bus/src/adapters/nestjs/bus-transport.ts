import { Server, type CustomTransportStrategy, type MessageHandler } from '@nestjs/microservices';
import type { RequestSpec, ServiceName } from '@weft/contracts';
import { lastValueFrom } from 'rxjs';
import type { Bus, MessageContext, Subscription } from '../../bus.js';

export interface BusTransportOptions {
  /** Queue group of the served subjects (the service's name); replicas with the same name share requests. */
  service?: ServiceName;
}

/**
 * NestJS transport over the Bus: every `@MessagePattern(spec.subject)` handler of the app is
 * served on the bus. Handlers get `(@Payload() call, @Ctx() context: MessageContext)`; their
 * return value (or resolved Promise/Observable) is the reply, a thrown ProblemError the problem
 * reply (register BusExceptionFilter, or use connectBusMicroservice, so Nest passes it through).
 */
export class BusTransport extends Server implements CustomTransportStrategy {
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly bus: Bus,
    private readonly options: BusTransportOptions = {},
  ) {
    super();
  }

  listen(callback: (error?: unknown) => void): void {
    this.serveAll().then(
      () => callback(),
      (error: unknown) => callback(error),
    );
  }

  async close(): Promise<void> {
    const subscriptions = this.subscriptions.splice(0);
    await Promise.all(subscriptions.map((subscription) => subscription.unsubscribe()));
  }

  on(): never {
    throw new Error('BusTransport emits no events; use the Bus directly');
  }

  unwrap<T>(): T {
    return this.bus as T;
  }

  private async serveAll(): Promise<void> {
    for (const [pattern, handler] of this.getHandlers()) {
      if (handler.isEventHandler) {
        // Events are JetStream subscriptions with durable names: subscribe through the Bus instead.
        this.logger.warn?.(`@EventPattern(${pattern}) is not served by BusTransport`);
        continue;
      }
      const spec: RequestSpec<unknown, unknown> = {
        kind: 'request',
        subject: pattern,
        sentBy: [],
        handledBy: this.options.service ?? 'any',
      };
      this.subscriptions.push(await this.bus.serve(spec, (payload, context) => this.invoke(handler, payload, context)));
    }
  }

  private async invoke(handler: MessageHandler, payload: unknown, context: MessageContext): Promise<unknown> {
    const result: unknown = await handler(payload, context);
    return lastValueFrom(this.transformToObservable(result), { defaultValue: undefined });
  }
}
