import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { createLogger, initTelemetry } from '@weft/observability';
import { openInfrastructure, requireDistributedConfig } from '@weft/runtime';
import { startProcessCatalogService } from './start-process-catalog-service.js';

/** The process catalog as its own process (distributed mode): WEFT_DATABASE_URL and WEFT_NATS_URL. */
const logger = createLogger('process-catalog');

async function main(): Promise<void> {
  const telemetry = initTelemetry('weft-process-catalog');
  const baseConfig = loadConfig();
  requireDistributedConfig(baseConfig, 'the process catalog');
  const infrastructure = await openInfrastructure(baseConfig, 'process-catalog');
  const service = await startProcessCatalogService({
    config: infrastructure.config,
    store: infrastructure.store,
    bus: infrastructure.bus,
  });
  infrastructure.relay.start();
  logger.info('process catalog serving');
  const stop = async (): Promise<void> => {
    await service.stop();
    await infrastructure.close();
    await telemetry.shutdown();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  logger.error({ err: error }, 'process catalog failed to start');
  process.exit(1);
});
