import 'reflect-metadata';
import { ConfigError, loadConfig } from '@weft/config';
import { createLogger, initTelemetry } from '@weft/observability';
import { startWeft } from './weft-runtime.js';

const logger = createLogger('weft');

async function main(): Promise<void> {
  const telemetry = initTelemetry('weft');
  const weft = await startWeft(loadConfig());
  const mode = weft.config.natsUrl || weft.config.databaseUrl ? 'all services, NATS/PostgreSQL' : 'embedded';
  process.stdout.write(`\nWeft is running (${mode}) at ${weft.url}\n  OpenAPI: ${weft.url}/api/docs\n`);
  if (weft.gateway.bootstrap.generatedKey) {
    process.stdout.write(
      `\n  A system API key was created. It is shown once here and kept in ${weft.gateway.bootstrap.keyFile ?? ''} (mode 0600):\n` +
        `  ${weft.gateway.bootstrap.generatedKey}\n\n`,
    );
  }
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    weft
      .stop()
      .then(() => telemetry.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'stop failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`weft: ${error.message}\n`);
  } else {
    logger.error({ err: error }, 'failed to start');
  }
  process.exit(1);
});
