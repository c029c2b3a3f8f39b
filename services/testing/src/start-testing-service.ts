import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { BusExceptionFilter, BusTransport } from '@weft/bus';
import { TESTING_RUNTIME } from './adapters/nats/testing-tokens.js';
import { TestingModule } from './testing.module.js';
import type { TestingDeps, TestingRuntime } from './testing-runtime.js';

export interface RunningTesting {
  runtime: TestingRuntime;
  stop(): Promise<void>;
}

/**
 * Starts the testing service on the given store and bus: migrates its read models, registers its
 * inline projections, serves the testing routes and resumes unfinished batches. For the all-in-one
 * composition and main.ts.
 */
export async function startTestingService(deps: TestingDeps): Promise<RunningTesting> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(TestingModule.register(deps), {
    strategy: new BusTransport(deps.bus, { service: 'testing' }),
    logger: ['error', 'warn'],
  });
  app.useGlobalFilters(new BusExceptionFilter());
  await app.listen();
  return { runtime: app.get<TestingRuntime>(TESTING_RUNTIME), stop: () => app.close() };
}
