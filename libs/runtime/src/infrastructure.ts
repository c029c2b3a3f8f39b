import { existsSync } from 'node:fs';
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
import { EmbeddedPostgresError } from './embedded-postgres/embedded-postgres-error.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres/embedded-postgres-server.js';
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

/** Where Weft before issue 13 kept its PGlite database; detected so its data is never silently left behind. */
export const pgliteDir = (dataDir: string): string => join(dataDir, 'pgdata');

export const hasPgliteData = (dataDir: string): boolean => existsSync(join(pgliteDir(dataDir), 'PG_VERSION'));

/** The command that moves a PGlite data dir into the embedded PostgreSQL. */
export const MIGRATE_EMBEDDED_COMMAND = 'pnpm migrate-embedded';

const ROUTINE_SERVER_LOG = /^(LOG|DETAIL|HINT|STATEMENT):|terminating connection due to administrator command/;

/** The embedded PostgreSQL of WEFT_DATA_DIR, its warnings logged; the caller stops it. */
export async function startConfiguredEmbeddedPostgres(config: WeftConfig): Promise<EmbeddedPostgres> {
  const logger = createLogger('embedded-postgres');
  return startEmbeddedPostgres({
    dataDir: config.dataDir,
    ...config.embeddedPostgres,
    // Startup, shutdown and the connections a stop cuts are routine: debug output only.
    onLog: (line) => (ROUTINE_SERVER_LOG.test(line) ? logger.debug(line) : logger.warn(line)),
  });
}

/** A database on an embedded PostgreSQL server that stops when the database closes. */
export async function openEmbeddedDatabase(config: WeftConfig, server: EmbeddedPostgres): Promise<Database> {
  const database = await openDatabase({ url: server.url, timeouts: config.databaseTimeouts });
  return {
    ...database,
    // Its socket is in the data dir, owned by this process, which stops the server with it.
    onlyWriter: true,
    async close() {
      try {
        await database.close();
      } finally {
        await server.stop();
      }
    },
  };
}

/**
 * WEFT_DATABASE_URL's PostgreSQL, else the embedded PostgreSQL in WEFT_DATA_DIR (durable: every
 * acknowledged commit is fsynced; docs/decisions/0005-durable-embedded-store.md).
 */
export async function openConfiguredDatabase(config: WeftConfig): Promise<Database> {
  if (config.databaseUrl) return openDatabase({ url: config.databaseUrl, timeouts: config.databaseTimeouts });
  if (hasPgliteData(config.dataDir)) {
    throw new EmbeddedPostgresError(
      `${pgliteDir(config.dataDir)} holds a PGlite database from an earlier Weft; move it into the embedded ` +
        `PostgreSQL with \`${MIGRATE_EMBEDDED_COMMAND}\` (same WEFT_DATA_DIR) first`,
    );
  }
  const server = await startConfiguredEmbeddedPostgres(config);
  try {
    return await openEmbeddedDatabase(config, server);
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * PostgreSQL + NATS when their URLs are set, else the embedded PostgreSQL + the in-memory bus. Every process runs
 * an outbox relay; a leader lock lets exactly one of them publish. The relay starts with `start()`.
 */
export async function openInfrastructure(
  baseConfig: WeftConfig,
  processName: string,
  openStoreDatabase: (config: WeftConfig) => Promise<Database> = openConfiguredDatabase,
): Promise<Infrastructure> {
  const config: WeftConfig = {
    ...baseConfig,
    secretKey: baseConfig.secretKey ?? (await loadOrCreateSecretKey(baseConfig.dataDir)),
  };
  const logger = createLogger(processName);
  const database = await openStoreDatabase(config);
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
    // Embedded, nothing outside the process can subscribe, and inside only the trigger service
    // follows process events (it restores its listeners from the catalog at start): an event no
    // durable takes is not kept. Execution events, most of what is committed, then cost nothing
    // to publish; a durable subscribing in the process gets them from then on.
    const bus: Bus =
      nats ?? new InMemoryBus({ maxMessageBytes: config.busMaxMessageBytes, eventRetention: 'interest' });
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
