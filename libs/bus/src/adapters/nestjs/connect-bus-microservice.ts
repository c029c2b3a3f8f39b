import type { INestApplication, INestMicroservice } from '@nestjs/common';
import type { MicroserviceOptions } from '@nestjs/microservices';
import type { Bus } from '../../bus.js';
import { BusExceptionFilter } from './bus-exception-filter.js';
import { BusTransport, type BusTransportOptions } from './bus-transport.js';

/** Serves the app's @MessagePattern handlers on the bus, with ProblemErrors passed through as problems. */
export function connectBusMicroservice(
  app: INestApplication,
  bus: Bus,
  options: BusTransportOptions = {},
): INestMicroservice {
  const microservice = app.connectMicroservice<MicroserviceOptions>({ strategy: new BusTransport(bus, options) });
  microservice.useGlobalFilters(new BusExceptionFilter());
  return microservice;
}
