import type { INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import type { Bus } from '../../bus.js';
import { BusExceptionFilter } from './bus-exception-filter.js';
import { BusTransport, type BusTransportOptions } from './bus-transport.js';

/** A NestJS microservice (no HTTP) whose @MessagePattern handlers are served on the bus. */
export async function createBusMicroservice(
  rootModule: Parameters<typeof NestFactory.createMicroservice>[0],
  bus: Bus,
  options: BusTransportOptions = {},
): Promise<INestMicroservice> {
  const microservice = await NestFactory.createMicroservice<MicroserviceOptions>(rootModule, {
    strategy: new BusTransport(bus, options),
  });
  microservice.useGlobalFilters(new BusExceptionFilter());
  return microservice;
}
