import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { InMemoryBus, NatsBus, natsInboxPrefix, type Bus } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import {
  JetStreamPublisher,
  OutboxRelay,
  PostgresEventStore,
  openDatabase,
  type Database,
  type EventPublisher,
} from '@weft/event-store';
import { createLogger } from '@weft/observability';
import { BusEventPublisher } from './bus-event-publisher.js';
import { loadOrCreateSecretKey } from './secret-key-file.js';

/** What every Weft process stands on: the database, the event store, the bus and the outbox relay. */
export interface Infrastructure {
  config: WeftConfig;
  database: Database;
  store: PostgresEventStore;
  bus: Bus;
  relay: OutboxRelay;
  close(): Promise<void>;
}

/** The embedded database lives in a sub-folder of the data dir, beside blobs and generated keys. */
export const pgliteDir = (dataDir: string): string => join(dataDir, 'pgdata');

export async function openConfiguredDatabase(config: WeftConfig): Promise<Database> {
  if (config.databaseUrl) return openDatabase({ url: config.databaseUrl, timeouts: config.databaseTimeouts });
  await mkdir(config.dataDir, { recursive: true });
  return openDatabase({ dataDir: pgliteDir(config.dataDir) });
}

/**
 * PostgreSQL + NATS when their URLs are set, else PGlite + the in-memory bus. Every process runs
 * an outbox relay; a leader lock lets exactly one of them publish. The relay starts with `start()`.
 */
export async function openInfrastructure(baseConfig: WeftConfig, processName: string): Promise<Infrastructure> {
  const config: WeftConfig = {
    ...baseConfig,
    secretKey: baseConfig.secretKey ?? (await loadOrCreateSecretKey(baseConfig.dataDir)),
  };
  const logger = createLogger(processName);
  const database = await openConfiguredDatabase(config);
  let nats: NatsBus | undefined;
  try {
    const store = await PostgresEventStore.open(database);
    nats = config.natsUrl
      ? await NatsBus.connect({
          servers: config.natsUrl,
          name: processName,
          security: config.nats,
          // The generated NATS permissions let each user read replies only under its own inbox prefix.
          inboxPrefix: natsInboxPrefix(config.nats.user ?? processName),
          maxMessageBytes: config.busMaxMessageBytes,
        })
      : undefined;
    const bus: Bus = nats ?? new InMemoryBus({ maxMessageBytes: config.busMaxMessageBytes });
    const publisher: EventPublisher = nats
      ? await JetStreamPublisher.create(nats.connection, {
          maxAgeMs: config.events.streamMaxAgeSeconds * 1000,
          maxBytes: config.events.streamMaxBytes,
        })
      : new BusEventPublisher(bus);
    const relay = new OutboxRelay(store, publisher, {
      onError: (error) => logger.error({ err: error }, 'outbox relay failed; retrying'),
      onPlaceholder: (event, reason) =>
        logger.warn({ position: event.position, eventType: event.type, reason }, 'event published as a placeholder'),
    });
    return {
      config,
      database,
      store,
      bus,
      relay,
      async close() {
        // Order matters: the relay and subscriptions stop before the database they read closes.
        await relay.stop();
        await store.close();
        await bus.close();
        await database.close();
      },
    };
  } catch (error) {
    await nats?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}

/** Distributed services refuse to start without their servers rather than silently running alone. */
export function requireDistributedConfig(config: WeftConfig, serviceName: string): void {
  const missing = [!config.databaseUrl && 'WEFT_DATABASE_URL', !config.natsUrl && 'WEFT_NATS_URL'].filter(Boolean);
  if (missing.length > 0) {
    throw new Error(
      `${serviceName} runs on its own only with ${missing.join(' and ')} set; use \`make start\` for one process`,
    );
  }
}
