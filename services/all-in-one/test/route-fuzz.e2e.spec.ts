import { randomUUID } from 'node:crypto';
import { loadConfig } from '@weft/config';
import { startWeft, type RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, removeDir, tempDataDir } from './weft-harness.js';
import {
  pick,
  randomObjectFor,
  randomRawBody,
  randomValue,
  seededRandom,
  type Random,
} from './support/random-bodies.js';
import { createTestDatabase, startNatsServer, type TestDatabase, type TestNatsServer } from '@weft/test-support';

/**
 * Every route the gateway documents (its OpenAPI), called with hostile bodies, queries and ids:
 * NUL characters, lone surrogates, numbers past double range, deep nesting, wrong types, large
 * strings, broken JSON. Whatever arrives: never a 5xx, every error is problem+json, and a refused
 * request (4xx) or a read changes no state (the event log does not grow).
 */
const SEED = Number(process.env.WEFT_FUZZ_SEED ?? 20261123);
const CASES_PER_ROUTE = Number(process.env.WEFT_FUZZ_CASES ?? 12);

interface Operation {
  method: string;
  path: string;
  bodyProperties: string[] | null;
}

interface Fixture {
  orgId: string;
  otherOrgId: string;
  orgKey: string;
  ids: Record<string, string>;
}

type Mode = 'embedded' | 'distributed';

describe.each<Mode>(['embedded', 'distributed'])('route fuzz (%s)', (mode) => {
  let weft: RunningWeft;
  let dataDir: string;
  let nats: TestNatsServer | undefined;
  let database: TestDatabase | undefined;
  let fixture: Fixture;
  let operations: Operation[];

  const call = async (
    key: string,
    method: string,
    path: string,
    body?: string,
    contentType = 'application/json',
  ): Promise<{ status: number; contentType: string; text: string }> => {
    const response = await fetch(`${weft.url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body,
    });
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      text: await response.text(),
    };
  };

  const json = async (method: string, path: string, body?: unknown): Promise<any> => {
    const answer = await call(BOOTSTRAP_KEY, method, path, body === undefined ? undefined : JSON.stringify(body));
    if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    return answer.text ? JSON.parse(answer.text) : undefined;
  };

  const eventCount = async (): Promise<number> => {
    const row = await weft.store.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };

  beforeAll(async () => {
    dataDir = await tempDataDir();
    const env: Record<string, string> = {
      WEFT_PORT: '0',
      WEFT_HOST: '127.0.0.1',
      WEFT_DATA_DIR: dataDir,
      WEFT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      WEFT_LOG_LEVEL: 'fatal',
      WEFT_BODY_LIMIT_BYTES: String(256 * 1024),
    };
    if (mode === 'distributed') {
      nats = await startNatsServer();
      database = await createTestDatabase('weft_fuzz');
      env.WEFT_NATS_URL = nats.url;
      env.WEFT_DATABASE_URL = database.url;
    }
    weft = await startWeft(loadConfig(env));
    fixture = await buildFixture(json);
    const docs = await json('GET', '/api/docs/json');
    operations = operationsOf(docs);
  }, 60_000);

  afterAll(async () => {
    await weft?.stop();
    await nats?.stop();
    await database?.drop();
    await removeDir(dataDir);
  });

  test('the OpenAPI document lists every route the fuzzer calls', () => {
    // A guard against a fuzzer that silently calls nothing.
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining(['POST /api/v1/processes/test/{processId}', 'POST /api/v1/organizations']),
    );
  });

  test('hostile bodies, queries and ids: no 5xx, errors as problem+json, refusals and reads change nothing', async () => {
    const random = seededRandom(SEED);
    const failures: string[] = [];
    // Deletes last, so the other routes still find the fixture's resources.
    const ordered = [...operations].sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    for (const operation of ordered) {
      for (let i = 0; i < CASES_PER_ROUTE; i++) {
        const path = fillPath(operation.path, fixture, random) + randomQuery(random);
        const { body, contentType } = randomBody(operation, random);
        const key = random() < 0.85 ? fixture.orgKey : BOOTSTRAP_KEY;
        const before = await eventCount();
        const answer = await call(key, operation.method, path, body, contentType);
        const after = await eventCount();
        const label = `${operation.method} ${path.slice(0, 160)} body=${JSON.stringify(body?.slice(0, 120))} -> ${answer.status}`;
        if (answer.status >= 500) failures.push(`${label}: ${answer.text.slice(0, 300)}`);
        else if (answer.status >= 400 && !answer.contentType.includes('application/problem+json'))
          failures.push(`${label}: content-type ${answer.contentType}`);
        else if ((answer.status >= 400 || operation.method === 'GET') && after !== before)
          failures.push(`${label}: ${after - before} events appended`);
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);

  test('the service still answers normally afterwards', async () => {
    const health = await call(BOOTSTRAP_KEY, 'GET', '/readyz');
    expect(health.status).toBe(200);
    const org = await json('POST', '/api/v1/organizations', { name: `after-${mode}` });
    expect(org.id).toEqual(expect.any(String));
  });
});

/** Paths (OpenAPI `{param}` syntax) and methods, with the property names of their JSON body schema. */
function operationsOf(docs: any): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(docs.paths ?? {})) {
    if (!path.startsWith('/api/v1/')) continue;
    for (const [method, operation] of Object.entries<any>(methods)) {
      const schema = operation?.requestBody?.content?.['application/json']?.schema;
      const properties = schema?.properties ? Object.keys(schema.properties) : schema ? [] : null;
      operations.push({ method: method.toUpperCase(), path, bodyProperties: properties });
    }
  }
  return operations;
}

/** The resources the routes name: one of each kind, owned by the fuzzed organization. */
async function buildFixture(json: (method: string, path: string, body?: unknown) => Promise<any>): Promise<Fixture> {
  const org = await json('POST', '/api/v1/organizations', { name: 'Fuzzed' });
  const other = await json('POST', '/api/v1/organizations', { name: 'Other' });
  const key = await json('POST', `/api/v1/api-keys/by-org/${org.id}`, {
    name: 'fuzz',
    userName: 'Fuzz',
    userId: randomUUID(),
  });
  const process = await json('POST', `/api/v1/processes/by-org/${org.id}`, {
    name: 'fuzzed',
    nodes: [
      { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
      { id: 'out', type: 'outputNode', position: { x: 1, y: 0 }, config: { label: 'Out', returnToClient: true } },
    ],
    edges: [{ source_node_id: 'in', target_node_id: 'out' }],
  });
  const version = await json('POST', `/api/v1/processes/versions/${process.id}`, { label: 'v1' });
  const schema = await json('POST', `/api/v1/schemas/by-org/${org.id}`, { name: 'S' });
  const connection = await json('POST', `/api/v1/connections/by-org/${org.id}`, { type: 'http', name: 'C', data: {} });
  const processCollection = await json('POST', `/api/v1/process-collections/by-org/${org.id}`, { name: 'P' });
  const schemaCollection = await json('POST', `/api/v1/schema-collections/by-org/${org.id}`, { name: 'S' });
  const execution = await json('POST', `/api/v1/processes/test/${process.id}`, { x: 1 });
  return {
    orgId: org.id,
    otherOrgId: other.id,
    orgKey: key.key,
    ids: {
      org: org.id,
      process: process.id,
      node: 'in',
      edge: process.edges?.[0]?.id ?? 'missing-edge',
      version: version.id ?? version.versionId,
      schema: schema.id,
      connection: connection.id,
      processCollection: processCollection.id,
      schemaCollection: schemaCollection.id,
      execution: execution.execution_id ?? execution.id,
      apiKey: key.id,
    },
  };
}

/** Which fixture id a path parameter names, judged from the path around it. */
function idKind(path: string, param: string): string {
  if (/org/i.test(param)) return 'org';
  if (param === 'node_id') return 'node';
  if (param === 'edge_id') return 'edge';
  if (param === 'version_id') return 'version';
  if (param === 'pid' || param === 'processId' || param === 'process_id') return 'process';
  if (param === 'sid') return 'schema';
  if (path.includes('/connections/')) return 'connection';
  if (path.includes('/process-collections/')) return 'processCollection';
  if (path.includes('/schema-collections/')) return 'schemaCollection';
  if (path.includes('/schemas/')) return 'schema';
  if (path.includes('/execution/')) return 'execution';
  if (path.includes('/api-keys/')) return 'apiKey';
  return 'process';
}

function fillPath(path: string, fixture: Fixture, random: Random): string {
  return path.replace(/\{([^}]+)\}/g, (_, param: string) => {
    const roll = random();
    if (roll < 0.7) return fixture.ids[idKind(path, param)] ?? 'missing';
    if (roll < 0.8) return /org/i.test(param) ? fixture.otherOrgId : randomUUID();
    // Already percent-encoded: NUL, a lone surrogate's UTF-8 bytes, an invalid escape, and oddities.
    return pick(random, ['%00', '%ED%A0%80', '%E0%A4%A', 'x'.repeat(300), '..', '-1', '1e999', '%2F']);
  });
}

function randomQuery(random: Random): string {
  if (random() < 0.5) return '';
  const names = ['page', 'pageSize', 'status', 'from', 'to', 'waitSeconds', 'inputNodeId', 'at', 'tag', 'q'];
  const values = ['-1', '0', '1e999', '999999999999', 'abc', '%00', '%ED%A0%80', '2026-99-99', '', '1.5'];
  const parts = Array.from(
    { length: 1 + Math.floor(random() * 3) },
    () => `${pick(random, names)}=${pick(random, values)}`,
  );
  return `?${parts.join('&')}`;
}

function randomBody(operation: Operation, random: Random): { body: string | undefined; contentType?: string } {
  // fetch cannot send a GET body; a DELETE may carry one.
  if (operation.method === 'GET') return { body: undefined };
  if (operation.method === 'DELETE') return random() < 0.2 ? { body: randomRawBody(random) } : { body: undefined };
  const roll = random();
  if (roll < 0.25) return { body: randomRawBody(random) };
  if (roll < 0.3)
    return { body: 'plain words', contentType: pick(random, ['text/plain', 'application/xml', 'application/json']) };
  const value =
    operation.bodyProperties && roll < 0.8 ? randomObjectFor(random, operation.bodyProperties) : randomValue(random);
  return { body: JSON.stringify(value) };
}
