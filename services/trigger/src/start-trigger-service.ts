import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { BusExceptionFilter, BusTransport } from '@weft/bus';
import { TRIGGER_RUNTIME } from './adapters/nats/trigger-tokens.js';
import { TriggerModule } from './trigger.module.js';
import type { TriggerDeps, TriggerRuntime } from './trigger-runtime.js';

export interface RunningTrigger {
  runtime: TriggerRuntime;
  stop(): Promise<void>;
}

/**
 * Starts the trigger service on the given store and bus: serves the webhook and listeners routes,
 * follows process events and restores the listeners of every running process. For the all-in-one
 * composition and main.ts.
 */
export async function startTriggerService(deps: TriggerDeps): Promise<RunningTrigger> {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(TriggerModule.register(deps), {
    strategy: new BusTransport(deps.bus, { service: 'trigger' }),
    logger: ['error', 'warn'],
  });
  app.useGlobalFilters(new BusExceptionFilter());
  await app.listen();
  return { runtime: app.get<TriggerRuntime>(TRIGGER_RUNTIME), stop: () => app.close() };
}
