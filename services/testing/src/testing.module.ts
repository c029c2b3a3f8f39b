import { Inject, Module, type DynamicModule, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { TestingHttpController } from './adapters/nats/testing-http.controller.js';
import { TestingInternalController } from './adapters/nats/testing-internal.controller.js';
import { TESTING_RUNTIME } from './adapters/nats/testing-tokens.js';
import { TestingRuntime, type TestingDeps } from './testing-runtime.js';

/** The testing service as a Nest module; its controllers answer on the bus (BusTransport). */
@Module({})
export class TestingModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(TESTING_RUNTIME) private readonly runtime: TestingRuntime) {}

  static register(deps: TestingDeps): DynamicModule {
    return {
      module: TestingModule,
      controllers: [TestingHttpController, TestingInternalController],
      providers: [{ provide: TESTING_RUNTIME, useFactory: () => TestingRuntime.open(deps) }],
      exports: [TESTING_RUNTIME],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.runtime.start();
  }

  onModuleDestroy(): void {
    this.runtime.stop();
  }
}
