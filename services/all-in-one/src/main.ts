import 'reflect-metadata';
import { ConfigError, loadConfig } from '@weft/config';
import { createLogger, initTelemetry } from '@weft/observability';
import { bootstrapKeyNotice } from '@weft/gateway';
import { startWeft } from './weft-runtime.js';

const logger = createLogger('weft');

async function main(): Promise<void> {
  const telemetry = initTelemetry('weft');
  const weft = await startWeft(loadConfig());
  const mode = weft.config.natsUrl || weft.config.databaseUrl ? 'all services, NATS/PostgreSQL' : 'embedded';
  process.stdout.write(`\nWeft is running (${mode}) at ${weft.url}\n  OpenAPI: ${weft.url}/api/docs\n`);
  // Only the embedded start shows a generated key; with shared NATS/PostgreSQL output is collected as logs.
  const notice = bootstrapKeyNotice(weft.gateway.bootstrap, { showKey: mode === 'embedded' });
  if (notice) process.stdout.write(notice);
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
