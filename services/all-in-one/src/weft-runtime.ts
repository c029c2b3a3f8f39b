import type { WeftConfig } from '@weft/config';
import { createGateway, type Gateway } from '@weft/gateway';
import { openInfrastructure, type Infrastructure } from '@weft/runtime';
import { startBackendServices, type BackendServices } from './backend-services.js';

export interface RunningWeft extends Infrastructure {
  url: string;
  gateway: Gateway;
  stop(): Promise<void>;
}

/**
 * Every service in one process. Embedded by default (in-memory bus, PGlite, local blobs); with
 * WEFT_NATS_URL / WEFT_DATABASE_URL set, the same composition runs over NATS and PostgreSQL.
 */
export async function startWeft(baseConfig: WeftConfig): Promise<RunningWeft> {
  const infrastructure = await openInfrastructure(baseConfig, 'weft');
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
