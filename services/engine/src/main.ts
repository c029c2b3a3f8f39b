import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { createLogger, initTelemetry } from '@weft/observability';
import { openInfrastructure, requireDistributedConfig } from '@weft/runtime';
import { startEngineService } from './start-engine-service.js';

/** The engine as its own process (distributed mode); replicas share the execution work queue. */
const logger = createLogger('engine');

async function main(): Promise<void> {
  const telemetry = initTelemetry('weft-engine');
  const baseConfig = loadConfig();
  requireDistributedConfig(baseConfig, 'the engine');
  const infrastructure = await openInfrastructure(baseConfig, 'engine');
  const engine = await startEngineService({
    store: infrastructure.store,
    bus: infrastructure.bus,
    config: infrastructure.config,
    options: {
      leaseMs: process.env.WEFT_ENGINE_LEASE_MS ? Number(process.env.WEFT_ENGINE_LEASE_MS) : undefined,
      logger,
    },
  });
  infrastructure.relay.start();
  logger.info('engine running');
  const stop = async (): Promise<void> => {
    await engine.stop();
    await infrastructure.close();
    await telemetry.shutdown();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  logger.error({ err: error }, 'engine failed to start');
  process.exit(1);
});
