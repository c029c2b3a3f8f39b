import { serviceRoutes, type HttpRoute } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import { migrate, type EventStore } from '@weft/event-store';
import { sql } from 'kysely';
import { createBlobStorage } from '@weft/blob-storage';
import type { FastifyInstance } from 'fastify';
import { ApiKeyCommands } from './application/api-key-commands.js';
import { Authenticator } from './application/authenticator.js';
import { ensureBootstrapKey, type BootstrapResult } from './application/bootstrap-key.js';
import { GatewayReadModels } from './application/gateway-read-models.js';
import { fileRoutes } from './adapters/http/file-routes.js';
import { organizationRoutes } from './adapters/http/organization-routes.js';
import { buildHttpServer } from './adapters/http/server.js';
import { serviceRouteBindings } from './adapters/http/service-routes.js';
import { gatewayMigrations } from './projections/gateway-migrations.js';
import { gatewayProjections } from './projections/gateway-projections.js';

export interface GatewayDeps {
  config: WeftConfig;
  store: EventStore;
  bus: Bus;
  /** Routes answered by services over the bus; all of contracts' routes by default. */
  routes?: readonly HttpRoute[];
  /** Pino options or false; the all-in-one passes its logger settings. */
  logger?: boolean | object;
  requestTimeoutMs?: number;
}

export interface Gateway {
  server: FastifyInstance;
  bootstrap: BootstrapResult;
  /** Where it listens, once `listen` resolved. */
  url?: string;
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Prepares the gateway's read models, the bootstrap key and the HTTP server (not yet listening). */
export async function createGateway(deps: GatewayDeps): Promise<Gateway> {
  const { store, bus, config } = deps;
  await migrate(store.db, gatewayMigrations, 'gateway_migrations');
  store.registerProjections(gatewayProjections);
  const readModels = new GatewayReadModels(store.db);
  const keys = new ApiKeyCommands(store, readModels);
  const authenticator = new Authenticator(readModels);
  const bootstrap = await ensureBootstrapKey(store, readModels, keys, {
    bootstrapApiKey: config.bootstrapApiKey,
    dataDir: config.dataDir,
  });
  // Webhook uploads are stored here and reach the trigger service as references (docs/triggers.md).
  const blobs = createBlobStorage(config);
  const server = await buildHttpServer({
    bodyLimitBytes: config.bodyLimitBytes,
    uploads: {
      blobs,
      maxFiles: config.triggers.webhookMaxFiles,
      fileMaxBytes: config.triggers.webhookFileMaxBytes,
    },
    authenticator,
    logger: deps.logger,
    bindings: [
      ...organizationRoutes({ store, readModels, keys, authenticator }),
      ...fileRoutes({ blobs }),
      ...serviceRouteBindings(deps.routes ?? serviceRoutes, bus, deps.requestTimeoutMs ?? 60_000),
    ],
    readiness: async () => ({
      database: await sql`SELECT 1`.execute(store.db).then(
        () => true,
        () => false,
      ),
      bus: await bus.isReady().catch(() => false),
    }),
  });
  const gateway: Gateway = {
    server,
    bootstrap,
    async listen() {
      const address = await server.listen({ port: config.port, host: config.host });
      gateway.url = address;
      return address;
    },
    async close() {
      await server.close();
      await blobs.close();
    },
  };
  return gateway;
}
