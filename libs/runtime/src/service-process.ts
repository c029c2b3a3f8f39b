import { loadConfig } from '@weft/config';
import { createLogger, initTelemetry } from '@weft/observability';
import { openInfrastructure, requireDistributedConfig, type Infrastructure } from './infrastructure.js';

export interface StartedService {
  stop(): Promise<void>;
}

/**
 * The body of every service's main.ts in distributed mode: telemetry from OTEL_*, PostgreSQL and
 * NATS from WEFT_*, the service itself, the outbox relay, and a clean stop on SIGTERM/SIGINT.
 */
export function runServiceProcess(
  name: string,
  start: (infrastructure: Infrastructure) => Promise<StartedService>,
): void {
  const logger = createLogger(name);
  const run = async (): Promise<void> => {
    const telemetry = initTelemetry(`weft-${name}`);
    const baseConfig = loadConfig();
    requireDistributedConfig(baseConfig, name);
    const infrastructure = await openInfrastructure(baseConfig, name);
    const service = await start(infrastructure);
    infrastructure.relay.start();
    logger.info(`${name} running`);
    const stop = async (): Promise<void> => {
      await service.stop();
      await infrastructure.close();
      await telemetry.shutdown();
      process.exit(0);
    };
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  };
  run().catch((error: unknown) => {
    logger.error({ err: error }, `${name} failed to start`);
    process.exit(1);
  });
}
