import { NatsBus, type Actor, type Bus } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { catalogHttp, type DecryptedConnection, type HttpCall, type ProcessRecord } from '@weft/contracts';
import { openDatabase, PostgresEventStore, type EventStore } from '@weft/event-store';
import { startProcessCatalogService } from '@weft/process-catalog';
import { namespacedBus } from '@weft/test-support';
import { namespaceOfQueue } from './queue-namespace.js';
import { testDatabaseUrl, testNatsUrl } from './test-services.js';

/**
 * The real process catalog service on the engine's bus and store: processes and connections are
 * created through its own HTTP-call subjects (as the gateway sends them), and the engine's
 * catalog client fetches them over the bus. Nothing of the catalog is replaced.
 */
export interface TestCatalog {
  /** Creates the process (the engine runs stopped ones too); answers the catalog's record: its id is the catalog's. */
  add(process: ProcessRecord): Promise<ProcessRecord>;
  /** Creates the connection; answers it with the id the catalog gave it. */
  addConnection(connection: Omit<DecryptedConnection, 'id'>): Promise<DecryptedConnection>;
  stop(): Promise<void>;
}

const actorOf = (organizationId: string): Actor => ({
  organizationId,
  userId: crypto.randomUUID(),
  userName: 'Catalog Test User',
  system: false,
});

export async function startTestCatalog(bus: Bus, store: EventStore): Promise<TestCatalog> {
  const service = await startProcessCatalogService({
    bus,
    store,
    config: { ...loadConfig({}), secretKey: 'engine-tests-catalog-secret-key' },
  });
  const send = async (spec: (typeof catalogHttp)[keyof typeof catalogHttp], call: Partial<HttpCall>, org: string) =>
    (
      await bus.request(
        spec,
        { params: {}, query: {}, body: undefined, headers: {}, ...call },
        { actor: actorOf(org), timeoutMs: 30_000 },
      )
    ).body;
  return {
    async add(process) {
      const org = process.organization_id;
      return (await send(
        catalogHttp.createProcess,
        {
          params: { org_id: org },
          body: {
            name: process.name,
            description: process.description,
            max_retries: process.max_retries,
            error_webhook_url: process.error_webhook_url,
            timeout_seconds: process.timeout_seconds,
            nodes: process.nodes,
            edges: process.edges,
          },
        },
        org,
      )) as ProcessRecord;
    },
    async addConnection(connection) {
      const { id } = (await send(
        catalogHttp.createConnection,
        {
          params: { org_id: connection.organizationId },
          body: { type: connection.type, name: connection.name, data: connection.data },
        },
        connection.organizationId,
      )) as { id: string };
      return { ...connection, id };
    },
    stop: () => service.stop(),
  };
}

/**
 * The catalog for engines in child processes (the SIGKILL tests): on NATS under the namespace of
 * their work queue and on PostgreSQL in their schema, so it outlives the engine that is killed.
 */
export async function startDistributedTestCatalog(schema: string, queueDurable: string): Promise<TestCatalog> {
  const database = await openDatabase({ url: testDatabaseUrl(), schema });
  const store = await PostgresEventStore.open(database);
  const bus = namespacedBus(
    await NatsBus.connect({ servers: testNatsUrl(), name: 'engine-test-catalog' }),
    namespaceOfQueue(queueDurable),
  );
  const catalog = await startTestCatalog(bus, store);
  return {
    ...catalog,
    async stop() {
      await catalog.stop();
      await bus.close();
      await store.close();
      await database.close();
    },
  };
}
