import { Module, type DynamicModule } from '@nestjs/common';
import type { Bus } from '../../bus.js';
import { BUS } from './bus-token.js';

/** Makes one Bus instance injectable everywhere (token BUS); the composition root creates and closes it. */
@Module({})
export class BusModule {
  static forRoot(bus: Bus): DynamicModule {
    return { module: BusModule, global: true, providers: [{ provide: BUS, useValue: bus }], exports: [BUS] };
  }
}
