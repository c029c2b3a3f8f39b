import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  gatewayEventSchemas,
  httpRoute,
  notFound,
  request,
  validateAgainst,
  type HttpCall,
  type HttpReply,
} from '@weft/contracts';
import { NatsBus, type MessageContext } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { openDatabase, PostgresEventStore, type Database } from '@weft/event-store';
import { createGateway, type Gateway } from '../src/index.js';

/**
 * Distributed mode against real PostgreSQL (a fresh schema) and real NATS: the gateway serves its
 * own routes from PostgreSQL and forwards a declared route over NATS to a handler on another
 * connection, as a separate service would.
 */
const databaseUrl = process.env.WEFT_TEST_DATABASE_URL ?? '';
const natsUrl = process.env.WEFT_TEST_NATS_URL ?? '';
// scripts/run-tests.sh sets both; without them the suite fails instead of testing against a guess.
if (!databaseUrl || !natsUrl)
  throw new Error('WEFT_TEST_DATABASE_URL and WEFT_TEST_NATS_URL must be set (scripts/run-tests.sh)');
const systemKey = `weft_it_${randomUUID()}`;
const suffix = randomUUID().slice(0, 8);

const echoSpec = request<HttpCall, HttpReply>(`weft.test.${suffix}.echo`, ['gateway'], 'process-catalog');
const silentSpec = request<HttpCall, HttpReply>(`weft.test.${suffix}.silent`, ['gateway'], 'process-catalog');
const routes = [
  httpRoute({
    method: 'POST',
    path: '/api/v1/echo/by-org/:org_id/:processId',
    spec: echoSpec,
    summary: 'echo',
    tag: 'test',
    orgParam: 'org_id',
    processParam: 'processId',
    bodySchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  }),
  httpRoute({ method: 'GET', path: '/api/v1/silent', spec: silentSpec, summary: 'nobody answers', tag: 'test' }),
  httpRoute({
    method: 'POST',
    path: '/api/v1/echo-create/by-org/:org_id',
    spec: echoSpec,
    summary: 'creates a process',
    tag: 'test',
    orgParam: 'org_id',
    createsProcess: true,
  }),
];

describe('gateway on PostgreSQL and NATS', () => {
  let database: Database;
  let gatewayBus: NatsBus;
  let serviceBus: NatsBus;
  let gateway: Gateway;
  let dataDir: string;
  let url: string;
  const seen: MessageContext[] = [];

  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: (await response.json().catch(() => undefined)) as any,
    };
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'weft-gw-'));
    database = await openDatabase({ url: databaseUrl, schema: `gw_${suffix}` });
    const store = await PostgresEventStore.open(database);
    gatewayBus = await NatsBus.connect({ servers: natsUrl, name: 'gateway-test' });
    serviceBus = await NatsBus.connect({ servers: natsUrl, name: 'service-test' });
    await serviceBus.serve(echoSpec, async (payload, context) => {
      seen.push(context);
      if (payload.params.processId === '00000000-0000-4000-8000-00000000dead') throw notFound('no such process');
      return { status: 202, body: { echoed: payload.body, params: payload.params }, headers: { 'x-echo': '1' } };
    });
    const config = { ...loadConfig({ WEFT_PORT: '0', WEFT_DATA_DIR: dataDir }), bootstrapApiKey: systemKey };
    gateway = await createGateway({ config, store, bus: gatewayBus, routes, requestTimeoutMs: 1500 });
    url = await gateway.listen();
  });

  afterAll(async () => {
    await gateway?.close();
    await gatewayBus?.close();
    await serviceBus?.close();
    await database?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('organizations and keys are event-sourced in PostgreSQL; a forwarded call carries the actor', async () => {
    const org = await call('POST', '/api/v1/organizations', systemKey, { name: 'Dist' });
    expect(org.status).toBe(201);
    const userId = randomUUID();
    const processId = randomUUID();
    const issued = await call('POST', `/api/v1/api-keys/by-org/${org.body.id}`, systemKey, {
      name: 'restricted',
      userName: 'Rita',
      userId,
      processIds: [processId],
    });
    expect(issued.status).toBe(201);

    const events = await database.db
      .selectFrom('events')
      .select(['type', 'metadata'])
      .where('stream_id', '=', `apikey-${issued.body.id}`)
      .execute();
    expect(events.map((e) => e.type)).toEqual(['ApiKeyIssued']);

    const echoed = await call('POST', `/api/v1/echo/by-org/${org.body.id}/${processId}`, issued.body.key, {
      text: 'hi',
    });
    expect(echoed.status).toBe(202);
    expect(echoed.body).toEqual({ echoed: { text: 'hi' }, params: { org_id: org.body.id, processId } });
    expect(seen.at(-1)?.actor).toMatchObject({
      organizationId: org.body.id,
      userId,
      userName: 'Rita',
      system: false,
      processIds: [processId],
    });

    // Restricted to one process: another one is forbidden, before any service is asked.
    const before = seen.length;
    const other = await call('POST', `/api/v1/echo/by-org/${org.body.id}/${randomUUID()}`, issued.body.key, {
      text: 'hi',
    });
    expect(other.status).toBe(403);
    expect(seen.length).toBe(before);
    // Nor may it create processes (create, import, fork).
    expect((await call('POST', `/api/v1/echo-create/by-org/${org.body.id}`, issued.body.key, {})).status).toBe(403);
    expect(seen.length).toBe(before);
    // Schema violations never reach the service either.
    expect((await call('POST', `/api/v1/echo/by-org/${org.body.id}/${processId}`, issued.body.key, {})).status).toBe(
      400,
    );
    expect(seen.length).toBe(before);
  });

  test("a service's problem reaches the client with its status; a service that never answers is a 503/504 problem", async () => {
    const org = await call('POST', '/api/v1/organizations', systemKey, { name: 'Problems' });
    const missing = await call(
      'POST',
      `/api/v1/echo/by-org/${org.body.id}/00000000-0000-4000-8000-00000000dead`,
      systemKey,
      { text: 'x' },
    );
    expect(missing.status).toBe(404);
    expect(missing.type).toContain('application/problem+json');
    expect(missing.body.detail).toBe('no such process');
    const silent = await call('GET', '/api/v1/silent', systemKey);
    expect([503, 504]).toContain(silent.status);
    expect(silent.type).toContain('application/problem+json');
  });

  test('every stored gateway event matches its published contract schema', async () => {
    const events = await database.db.selectFrom('events').select(['type', 'data', 'schema_version']).execute();
    expect(events.length).toBeGreaterThan(3);
    for (const event of events) {
      const contract = gatewayEventSchemas[event.type];
      expect(contract).toBeDefined();
      expect(event.schema_version).toBe(contract?.schemaVersion);
      expect(validateAgainst(contract!.schema, event.data)).toEqual([]);
    }
  });

  test('readiness reflects the database and the bus', async () => {
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { database: true, bus: true } });
  });
});
