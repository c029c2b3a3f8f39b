import type { Bus } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import type { EventStore } from '@weft/event-store';

export interface BackendServices {
  stop(): Promise<void>;
}

/** The services behind the gateway, started in this process. */
export async function startBackendServices(_deps: {
  config: WeftConfig;
  store: EventStore;
  bus: Bus;
}): Promise<BackendServices> {
  const started: { stop(): Promise<void> }[] = [];
  return {
    async stop() {
      for (const service of started.reverse()) await service.stop();
    },
  };
}
