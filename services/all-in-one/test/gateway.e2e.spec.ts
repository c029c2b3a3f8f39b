import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { client, removeDir, startEmbedded, tempDataDir } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

describe(`Weft over HTTP (${deploymentKind()}): organizations, API keys, auth, validation`, () => {
  let deployment: Deployment;
  let bootstrapKey: string;
  const weft = { url: '' };

  beforeAll(async () => {
    deployment = await startDeployment({ env: { WEFT_BODY_LIMIT_BYTES: '4096' } });
    weft.url = deployment.baseUrl;
    bootstrapKey = deployment.key;
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await deployment?.stop();
  });

  test('health and readiness answer without a key', async () => {
    const anonymous = client(weft.url);
    expect((await anonymous('GET', '/healthz')).status).toBe(200);
    const ready = await anonymous('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ database: true, bus: true });
  });

  test('no key or a wrong key: 401 problem+json', async () => {
    for (const key of [undefined, 'weft_not_a_real_key']) {
      const answer = await client(weft.url, key)('GET', '/api/v1/api-keys/by-org/x');
      expect(answer.status).toBe(401);
      expect(answer.contentType).toContain('application/problem+json');
      expect(answer.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    }
  });

  test('the bootstrap key creates an organization and an org key; org keys see only their organization', async () => {
    const system = client(weft.url, bootstrapKey);
    const acme = await system('POST', '/api/v1/organizations', { name: 'Acme' });
    expect(acme.status).toBe(201);
    const other = await system('POST', '/api/v1/organizations', { name: 'Other' });
    const userId = randomUUID();
    const issued = await system('POST', `/api/v1/api-keys/by-org/${acme.body.id}`, {
      name: 'ci',
      userName: 'Ada',
      userId,
    });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ organizationId: acme.body.id, userName: 'Ada', userId, system: false });
    expect(issued.body.key).toMatch(/^weft_/);

    const org = client(weft.url, issued.body.key);
    const own = await org('GET', `/api/v1/api-keys/by-org/${acme.body.id}`);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ page: 1, pageSize: 20, total: 1 });
    expect(own.body.items[0]).toMatchObject({ id: issued.body.id, name: 'ci' });
    // The key is shown once: never listed, nor its hash.
    expect(JSON.stringify(own.body)).not.toContain(issued.body.key);
    expect(own.body.items[0]).not.toHaveProperty('keyHash');

    const foreign = await org('GET', `/api/v1/api-keys/by-org/${other.body.id}`);
    expect(foreign.status).toBe(404);
    expect(foreign.contentType).toContain('application/problem+json');
    // Only system keys create organizations or system keys.
    expect((await org('POST', '/api/v1/organizations', { name: 'Mine' })).status).toBe(403);
    expect(
      (await org('POST', `/api/v1/api-keys/by-org/${acme.body.id}`, { name: 's', userName: 'A', userId, system: true }))
        .status,
    ).toBe(403);
  });

  test('a malformed body gets 400 listing every violation and changes nothing', async () => {
    const system = client(weft.url, bootstrapKey);
    const org = await system('POST', '/api/v1/organizations', { name: 'Validated' });
    const before = await system('GET', `/api/v1/api-keys/by-org/${org.body.id}`);
    const bad = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: '',
      userId: 'not-a-uuid',
      color: 'red',
    });
    expect(bad.status).toBe(400);
    expect(bad.contentType).toContain('application/problem+json');
    expect(bad.body.errors).toEqual(
      expect.arrayContaining([
        { path: '/userName', message: 'is required' },
        { path: '/color', message: 'is not allowed' },
        { path: '/userId', message: 'must match format "uuid"' },
        { path: '/name', message: 'must NOT have fewer than 1 characters' },
      ]),
    );
    expect((await system('POST', '/api/v1/organizations', '{"name": ')).status).toBe(400);
    const deep = await system('POST', '/api/v1/organizations', '['.repeat(1500) + ']'.repeat(1500));
    expect(deep.status).toBe(400);
    expect(deep.contentType).toContain('application/problem+json');
    const after = await system('GET', `/api/v1/api-keys/by-org/${org.body.id}`);
    expect(after.body.total).toBe(before.body.total);
  });

  test('a body over the limit gets 413; unknown routes and malformed ids get 404 problems', async () => {
    const system = client(weft.url, bootstrapKey);
    const big = await system('POST', '/api/v1/organizations', { name: 'x'.repeat(10_000) });
    expect(big.status).toBe(413);
    expect(big.contentType).toContain('application/problem+json');
    expect((await system('GET', '/api/v1/nothing-here')).status).toBe(404);
    const malformed = await system('DELETE', '/api/v1/api-keys/by-id/not-a-uuid');
    expect(malformed.status).toBe(404);
    expect(malformed.contentType).toContain('application/problem+json');
    expect((await system('GET', '/api/v1/api-keys/by-org/x?page=0')).status).toBe(404);
  });

  test('bad paging answers 400', async () => {
    const system = client(weft.url, bootstrapKey);
    const org = await system('POST', '/api/v1/organizations', { name: 'Paged' });
    const answer = await system('GET', `/api/v1/api-keys/by-org/${org.body.id}?page=0&pageSize=1000`);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toHaveLength(2);
  });

  test('a revoked key stops working at once', async () => {
    const system = client(weft.url, bootstrapKey);
    const org = await system('POST', '/api/v1/organizations', { name: 'Revoking' });
    const issued = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: 'tmp',
      userName: 'T',
      userId: randomUUID(),
    });
    const asKey = client(weft.url, issued.body.key);
    expect((await asKey('GET', `/api/v1/api-keys/by-org/${org.body.id}`)).status).toBe(200);
    expect((await system('DELETE', `/api/v1/api-keys/by-id/${issued.body.id}`)).status).toBe(204);
    expect((await asKey('GET', `/api/v1/api-keys/by-org/${org.body.id}`)).status).toBe(401);
    expect((await system('DELETE', `/api/v1/api-keys/by-id/${issued.body.id}`)).status).toBe(404);
  });

  test('the Authorization: Bearer header works like X-API-Key', async () => {
    const answer = await client(weft.url)(
      'POST',
      '/api/v1/organizations',
      { name: 'Bearer' },
      { authorization: `Bearer ${bootstrapKey}` },
    );
    expect(answer.status).toBe(201);
  });

  test('OpenAPI lists the endpoints', async () => {
    const docs = await client(weft.url)('GET', '/api/docs/json');
    expect(docs.status).toBe(200);
    expect(Object.keys(docs.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/organizations',
        '/api/v1/api-keys/by-org/{org_id}',
        '/api/v1/api-keys/by-id/{id}',
      ]),
    );
  });
});

/** In-process: the test reads the generated key from the gateway object and the key file in the data dir. */
describe('embedded Weft: first start and restart', () => {
  test('without WEFT_BOOTSTRAP_API_KEY the first start creates a key file (0600) once; data survives a restart', async () => {
    const dataDir = await tempDataDir();
    try {
      const first = await startEmbedded(dataDir);
      const generated = first.gateway.bootstrap.generatedKey;
      expect(generated).toMatch(/^weft_/);
      const keyFile = join(dataDir, 'bootstrap-api-key');
      expect((await readFile(keyFile, 'utf8')).trim()).toBe(generated);
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const created = await client(first.url, generated)('POST', '/api/v1/organizations', { name: 'Durable' });
      expect(created.status).toBe(201);
      await first.stop();

      const second = await startEmbedded(dataDir);
      try {
        expect(second.gateway.bootstrap.generatedKey).toBeUndefined();
        const read = await client(second.url, generated)('GET', `/api/v1/organizations/${created.body.id}`);
        expect(read.status).toBe(200);
        expect(read.body).toMatchObject({ id: created.body.id, name: 'Durable' });
      } finally {
        await second.stop();
      }
    } finally {
      await removeDir(dataDir);
    }
  });
});
