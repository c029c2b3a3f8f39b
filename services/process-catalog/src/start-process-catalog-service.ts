import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { BusExceptionFilter, BusTransport } from '@weft/bus';
import { ProcessCatalogModule, type CatalogDeps } from './catalog.module.js';

export interface RunningService {
  stop(): Promise<void>;
}

/**
 * Starts the catalog on the given store and bus: migrates its read models, registers its inline
 * projections, serves every catalog subject. For the all-in-one composition and main.ts.
 */
export async function startProcessCatalogService(deps: CatalogDeps): Promise<RunningService> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(ProcessCatalogModule.register(deps), {
    strategy: new BusTransport(deps.bus, { service: 'process-catalog' }),
    logger: ['error', 'warn'],
  });
  app.useGlobalFilters(new BusExceptionFilter());
  await app.listen();
  return { stop: () => app.close() };
}
