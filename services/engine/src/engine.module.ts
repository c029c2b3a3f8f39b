import { Module, type DynamicModule, type OnApplicationBootstrap, type OnModuleDestroy, Inject } from '@nestjs/common';
import { ExecutionHttpController } from './adapters/http/execution-http.controller.js';
import { EngineInternalController } from './adapters/nats/engine-internal.controller.js';
import { ENGINE_RUNTIME } from './adapters/nats/engine-tokens.js';
import { EngineRuntime, type EngineDeps } from './engine-runtime.js';

/** The engine as a Nest module; its controllers answer on the bus (BusTransport). */
@Module({})
export class EngineModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(ENGINE_RUNTIME) private readonly runtime: EngineRuntime) {}

  static register(deps: EngineDeps): DynamicModule {
    return {
      module: EngineModule,
      controllers: [ExecutionHttpController, EngineInternalController],
      providers: [{ provide: ENGINE_RUNTIME, useFactory: () => EngineRuntime.open(deps) }],
      exports: [ENGINE_RUNTIME],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.runtime.stop();
  }
}
