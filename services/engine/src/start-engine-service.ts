import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { BusExceptionFilter, BusTransport } from '@weft/bus';
import { ENGINE_RUNTIME } from './adapters/nats/engine-tokens.js';
import { EngineModule } from './engine.module.js';
import type { EngineDeps } from './engine-runtime.js';
import type { EngineRuntime } from './engine-runtime.js';

export interface RunningEngine {
  runtime: EngineRuntime;
  stop(): Promise<void>;
}

/**
 * Starts the engine on the given store and bus: migrates its read models, registers its inline
 * projection, serves its subjects and takes execution requests. For the all-in-one composition
 * and main.ts.
 */
export async function startEngineService(deps: EngineDeps): Promise<RunningEngine> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(EngineModule.register(deps), {
    strategy: new BusTransport(deps.bus, { service: 'engine' }),
    logger: ['error', 'warn'],
  });
  app.useGlobalFilters(new BusExceptionFilter());
  await app.listen();
  return { runtime: app.get<EngineRuntime>(ENGINE_RUNTIME), stop: () => app.close() };
}
