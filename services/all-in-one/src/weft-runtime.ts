import type { WeftConfig } from '@weft/config';
import type { Database } from '@weft/event-store';
import { createGateway, type Gateway } from '@weft/gateway';
import { hasPgliteData, openInfrastructure, type Infrastructure } from '@weft/runtime';
import { startBackendServices, type BackendServices } from './backend-services.js';
import { migratePgliteDataDir } from './pglite-migration.js';

export interface StartWeftOptions {
  /** Where migration progress goes; stdout by default. */
  report?: (line: string) => void;
  /** Another store than the configured one (tests: a PGlite store as Weft had before issue 13). */
  database?: (config: WeftConfig) => Promise<Database>;
}

export interface RunningWeft extends Infrastructure {
  url: string;
  gateway: Gateway;
  stop(): Promise<void>;
}

/**
 * Every service in one process. Embedded by default (in-memory bus, the embedded PostgreSQL, local
 * blobs); with WEFT_NATS_URL / WEFT_DATABASE_URL set, the same composition runs over NATS and PostgreSQL.
 * A PGlite data dir of an earlier Weft is migrated first, its progress printed.
 */
export async function startWeft(baseConfig: WeftConfig, options: StartWeftOptions = {}): Promise<RunningWeft> {
  const report = options.report ?? ((line: string) => process.stdout.write(`${line}\n`));
  if (!baseConfig.databaseUrl && !options.database && hasPgliteData(baseConfig.dataDir)) {
    await migratePgliteDataDir(baseConfig, report);
  }
  const infrastructure = await openInfrastructure(baseConfig, 'weft', options.database);
  const { config, store, bus, relay } = infrastructure;
  let services: BackendServices | undefined;
  let gateway: Gateway | undefined;
  const stop = async (): Promise<void> => {
    await gateway?.close();
    await services?.stop();
    await infrastructure.close();
  };
  try {
    services = await startBackendServices({ config, store, bus });
    gateway = await createGateway({ config, store, bus });
    const url = await gateway.listen();
    relay.start();
    return { ...infrastructure, url, gateway, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}
