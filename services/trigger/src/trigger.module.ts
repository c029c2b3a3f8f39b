import { Inject, Module, type DynamicModule, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { TriggerHttpController } from './adapters/nats/trigger-http.controller.js';
import { TRIGGER_RUNTIME } from './adapters/nats/trigger-tokens.js';
import { TriggerRuntime, type TriggerDeps } from './trigger-runtime.js';

/** The trigger service as a Nest module; its controller answers on the bus (BusTransport). */
@Module({})
export class TriggerModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(TRIGGER_RUNTIME) private readonly runtime: TriggerRuntime) {}

  static register(deps: TriggerDeps): DynamicModule {
    return {
      module: TriggerModule,
      controllers: [TriggerHttpController],
      providers: [{ provide: TRIGGER_RUNTIME, useFactory: () => TriggerRuntime.open(deps) }],
      exports: [TRIGGER_RUNTIME],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.runtime.stop();
  }
}
