import { Module, type DynamicModule } from '@nestjs/common';
import type { Bus } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import type { EventStore } from '@weft/event-store';
import { openCatalogApplication, type CatalogApplication } from './application/catalog-application.js';
import { catalogHttpHandlers } from './adapters/http/catalog-http-handlers.js';
import { busTestCases } from './adapters/nats/bus-test-cases.js';
import { CatalogInternalController } from './adapters/nats/catalog-internal-controller.js';
import { ConnectionController } from './adapters/nats/connection-controller.js';
import { CATALOG_APPLICATION, CATALOG_HTTP_HANDLERS } from './adapters/nats/catalog-tokens.js';
import { GraphController } from './adapters/nats/graph-controller.js';
import { ProcessCollectionController } from './adapters/nats/process-collection-controller.js';
import { ProcessController } from './adapters/nats/process-controller.js';
import { SchemaCollectionController } from './adapters/nats/schema-collection-controller.js';
import { SchemaController } from './adapters/nats/schema-controller.js';
import { VersionController } from './adapters/nats/version-controller.js';

/** What the catalog needs from its composition root. */
export interface CatalogDeps {
  store: EventStore;
  bus: Bus;
  config: WeftConfig;
}

/** The process catalog as a Nest module; its controllers answer on the bus (BusTransport). */
@Module({})
export class ProcessCatalogModule {
  static register(deps: CatalogDeps): DynamicModule {
    return {
      module: ProcessCatalogModule,
      controllers: [
        ProcessController,
        GraphController,
        VersionController,
        ConnectionController,
        SchemaController,
        ProcessCollectionController,
        SchemaCollectionController,
        CatalogInternalController,
      ],
      providers: [
        {
          provide: CATALOG_APPLICATION,
          useFactory: async () => ({
            ...(await openCatalogApplication(deps.store, deps.config)),
            testCases: busTestCases(deps.bus),
          }),
        },
        {
          provide: CATALOG_HTTP_HANDLERS,
          useFactory: (app: CatalogApplication) => catalogHttpHandlers(app),
          inject: [CATALOG_APPLICATION],
        },
      ],
      exports: [CATALOG_APPLICATION],
    };
  }
}
