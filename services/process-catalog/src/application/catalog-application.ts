import { randomUUID } from 'node:crypto';
import { migrate, type EventStore, type Projection } from '@weft/event-store';
import { loadOrCreateSecretKey } from '@weft/runtime';
import { CATALOG_MIGRATIONS_TABLE, catalogMigrations } from '../projections/catalog-migrations.js';
import { processProjection } from '../projections/process-projection.js';
import { versionProjection } from '../projections/version-projection.js';
import { collectionProjection } from '../projections/collection-projection.js';
import { connectionProjection } from '../projections/connection-projection.js';
import { schemaProjection } from '../projections/schema-projection.js';
import type { Runtime } from './caller.js';
import { Collections } from './collections.js';
import { Connections } from './connections.js';
import { OAuthConsents } from './oauth-consents.js';
import { Schemas } from './schemas.js';
import { SecretBox } from './secret-box.js';
import { ProcessCommands } from './process-commands.js';
import { ProcessQueries } from './process-queries.js';
import type { TestCaseCarrier } from './test-case-carrier.js';

/** Every read model the catalog owns, in the order they must apply. */
export const catalogProjections: readonly Projection[] = [
  processProjection,
  versionProjection,
  connectionProjection,
  schemaProjection,
  collectionProjection,
];

const storesWithProjections = new WeakSet<EventStore>();

export const systemRuntime: Runtime = { now: () => new Date().toISOString(), newId: () => randomUUID() };

/** The catalog's application layer, wired onto one event store. */
export interface CatalogApplication {
  store: EventStore;
  runtime: Runtime;
  processes: ProcessCommands;
  queries: ProcessQueries;
  schemas: Schemas;
  connections: Connections;
  oauthConsents: OAuthConsents;
  collections: Collections;
  /** The testing service, for test cases in export, import and fork (absent: documents carry none). */
  testCases?: TestCaseCarrier;
}

/** Settings the catalog reads (a subset of WeftConfig). */
export interface CatalogSettings {
  secretKey?: string;
  dataDir: string;
  /** Token and consent endpoints of the mail providers (WEFT_GOOGLE_TOKEN_URL ...), for the OAuth code flow. */
  providers?: {
    googleTokenUrl?: string;
    microsoftTokenUrl?: string;
    googleAuthUrl?: string;
    microsoftAuthUrl?: string;
  };
  mail?: { oauthStateTtlSeconds: number; oauthMaxPendingConsents: number };
}

/** Migrates the read-model tables and registers the inline projections (once per store). */
export async function openCatalogApplication(
  store: EventStore,
  settings: CatalogSettings,
  runtime: Runtime = systemRuntime,
): Promise<CatalogApplication> {
  // WEFT_SECRET_KEY, or (embedded) the key generated once into the data dir.
  const secrets = new SecretBox(settings.secretKey ?? (await loadOrCreateSecretKey(settings.dataDir)));
  await migrate(store.db, catalogMigrations, CATALOG_MIGRATIONS_TABLE);
  // A restarted service on the same store must not apply every event twice.
  if (!storesWithProjections.has(store)) {
    store.registerProjections(catalogProjections);
    storesWithProjections.add(store);
  }
  const queries = new ProcessQueries(store.db, store);
  const connections = new Connections(store, store.db, runtime, secrets);
  const providers = settings.providers ?? {};
  const oauthConsents = new OAuthConsents(store.db, connections, secrets, runtime, {
    endpoints: {
      gmail: {
        authUrl: providers.googleAuthUrl ?? 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: providers.googleTokenUrl ?? 'https://oauth2.googleapis.com/token',
      },
      outlook: {
        authUrl: providers.microsoftAuthUrl ?? 'https://login.microsoftonline.com/<tenant>/oauth2/v2.0/authorize',
        tokenUrl: providers.microsoftTokenUrl ?? 'https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token',
      },
    },
    stateTtlSeconds: settings.mail?.oauthStateTtlSeconds ?? 600,
    maxPending: settings.mail?.oauthMaxPendingConsents ?? 50,
    tokenTimeoutMs: 15_000,
  });
  return {
    store,
    runtime,
    processes: new ProcessCommands(store, runtime),
    queries,
    schemas: new Schemas(store, store.db, runtime),
    connections,
    oauthConsents,
    collections: new Collections(store, store.db, runtime),
  };
}
