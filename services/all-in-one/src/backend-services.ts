import type { Bus } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import type { EventStore } from '@weft/event-store';
import { startEngineService } from '@weft/engine';
import { startProcessCatalogService } from '@weft/process-catalog';
import { startTestingService } from '@weft/testing';
import { startTriggerService } from '@weft/trigger';

export interface BackendServices {
  stop(): Promise<void>;
}

/** The services behind the gateway, started in this process; stopped in reverse order. */
export async function startBackendServices(deps: {
  config: WeftConfig;
  store: EventStore;
  bus: Bus;
}): Promise<BackendServices> {
  const started: { stop(): Promise<void> }[] = [];
  const stopAll = async (): Promise<void> => {
    for (const service of started.reverse()) await service.stop();
  };
  try {
    started.push(await startProcessCatalogService(deps));
    started.push(await startEngineService(deps));
    started.push(await startTestingService(deps));
    // Last: it restores listeners of running processes, which fire into the engine.
    started.push(await startTriggerService(deps));
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
  return { stop: stopAll };
}
