import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { createLogger, initTelemetry } from '@weft/observability';
import { openInfrastructure, requireDistributedConfig } from '@weft/runtime';
import { createGateway } from './gateway.js';

/** The gateway as its own process (distributed mode): `pnpm --filter @weft/gateway start`. */
const logger = createLogger('gateway');

async function main(): Promise<void> {
  const telemetry = initTelemetry('weft-gateway');
  const baseConfig = loadConfig();
  requireDistributedConfig(baseConfig, 'the gateway');
  const infrastructure = await openInfrastructure(baseConfig, 'gateway');
  const gateway = await createGateway({
    config: infrastructure.config,
    store: infrastructure.store,
    bus: infrastructure.bus,
  });
  const url = await gateway.listen();
  infrastructure.relay.start();
  logger.info({ url }, 'gateway listening');
  if (gateway.bootstrap.generatedKey) {
    process.stdout.write(
      `A system API key was created (shown once; also in ${gateway.bootstrap.keyFile ?? ''}):\n${gateway.bootstrap.generatedKey}\n`,
    );
  }
  const stop = async (): Promise<void> => {
    await gateway.close();
    await infrastructure.close();
    await telemetry.shutdown();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  logger.error({ err: error }, 'gateway failed to start');
  process.exit(1);
});
