import { randomUUID } from 'node:crypto';
import type { Actor } from '@weft/bus';
import { ProblemError, type HttpCall, type HttpReply } from '@weft/contracts';
import { openDatabase, PostgresEventStore, type Database } from '@weft/event-store';
import {
  FakeIdentity,
  FakeMailboxes,
  startGmailServer,
  startGraphServer,
  type GmailServer,
  type GraphServer,
} from '@weft/mail-provider-servers';
import { catalogHttpHandlers } from '../src/adapters/http/catalog-http-handlers.js';
import type { CatalogHttpHandlers } from '../src/adapters/http/catalog-http-handler.js';
import { openCatalogApplication, type CatalogApplication } from '../src/application/catalog-application.js';
import { actorOf, backends } from './fixtures/catalog-harness.js';
import { testDatabaseUrl } from './fixtures/test-services.js';

const REDIRECT = 'https://app.example.test/oauth/done';

describe.each(backends())('mail OAuth code flow on %s', (backend) => {
  let database: Database;
  let store: PostgresEventStore;
  let app: CatalogApplication;
  let handlers: CatalogHttpHandlers;
  let identity: FakeIdentity;
  let gmail: GmailServer;
  let graph: GraphServer;
  let now = Date.UTC(2026, 10, 23, 9, 0, 0);

  beforeAll(async () => {
    database =
      backend === 'postgres'
        ? await openDatabase({ url: testDatabaseUrl(), schema: `test_${randomUUID().replace(/-/g, '').slice(0, 20)}` })
        : await openDatabase({ dataDir: 'memory://' });
    store = await PostgresEventStore.open(database);
    identity = new FakeIdentity();
    identity.registerClient('app-id', 'app-secret');
    const mailboxes = new FakeMailboxes();
    gmail = await startGmailServer({ mailboxes, identity });
    graph = await startGraphServer({ mailboxes, identity });
    app = await openCatalogApplication(
      store,
      {
        secretKey: 'test-secret-key-of-the-catalog',
        dataDir: '/nonexistent',
        providers: {
          googleAuthUrl: gmail.authorizeUrl,
          googleTokenUrl: gmail.tokenUrl,
          microsoftAuthUrl: graph.authorizeUrl,
          microsoftTokenUrl: graph.tokenUrl,
        },
        mail: { oauthStateTtlSeconds: 600, oauthMaxPendingConsents: 3 },
      },
      { now: () => new Date(now).toISOString(), newId: () => randomUUID() },
    );
    handlers = catalogHttpHandlers(app);
  });

  afterAll(async () => {
    await gmail.close();
    await graph.close();
    await store.close();
    if (backend === 'postgres') await database.db.schema.dropSchema(database.schema).ifExists().cascade().execute();
    await database.close();
  });

  const call = async (
    name: keyof CatalogHttpHandlers,
    actor: Actor,
    partial: Partial<HttpCall>,
  ): Promise<HttpReply<any>> => {
    try {
      return await handlers[name]({ params: {}, query: {}, body: undefined, headers: {}, ...partial }, { actor });
    } catch (error) {
      if (error instanceof ProblemError) return { status: error.status, body: error.problem };
      throw error;
    }
  };

  const connection = async (
    actor: Actor,
    type: string,
    data: Record<string, unknown>,
  ): Promise<{ id: string; name: string }> => {
    const name = `mail-${randomUUID().slice(0, 8)}`;
    const reply = await call('createConnection', actor, {
      params: { org_id: actor.organizationId },
      body: { type, name, data },
    });
    expect(reply.status).toBe(201);
    return reply.body;
  };

  const start = (actor: Actor, provider: string, connectionName: string, redirectUri = REDIRECT) =>
    call('startOAuthConsent', actor, { params: { provider }, query: { connectionName, redirectUri } });

  /** The user's browser: the consent page redirects back with code and state. */
  const consent = async (url: string): Promise<{ code: string; state: string }> => {
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const back = new URL(response.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    return { code: back.searchParams.get('code')!, state: back.searchParams.get('state')! };
  };

  it.each(['gmail', 'outlook'])(
    '%s: start answers a PKCE consent URL; the callback stores a working refresh token, encrypted',
    async (provider) => {
      const actor = actorOf(randomUUID());
      const type = provider === 'gmail' ? 'gmail-oauth' : 'outlook-oauth';
      const created = await connection(actor, type, {
        clientId: 'app-id',
        clientSecret: 'app-secret',
        ...(provider === 'outlook' ? { tenantId: 'contoso' } : {}),
      });

      const started = await start(actor, provider, created.name);
      expect(started.status).toBe(200);
      const url = new URL(started.body.url);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(url.searchParams.get('state')).toBe(started.body.state);
      expect(url.searchParams.get('client_id')).toBe('app-id');
      if (provider === 'outlook') expect(url.pathname).toBe('/contoso/oauth2/v2.0/authorize');
      expect(started.body.url).not.toContain('app-secret');

      const { code, state } = await consent(started.body.url);
      const finished = await call('finishOAuthConsent', actor, { params: { provider }, query: { code, state } });
      expect(finished.status).toBe(200);
      expect(finished.body).toMatchObject({ id: created.id, type });
      expect(JSON.stringify(finished.body)).not.toMatch(/rt-|at-|app-secret/);

      const stored = await app.connections.decrypted(created.id, actor.organizationId);
      expect(stored.data).toMatchObject({
        clientId: 'app-id',
        clientSecret: 'app-secret',
        refreshToken: expect.stringMatching(/^rt-/),
      });
      const rows = await store.db
        .selectFrom('catalog_connections')
        .select('sealed_data')
        .where('id', '=', created.id)
        .execute();
      expect(JSON.stringify(rows)).not.toContain(String(stored.data.refreshToken));
      // The stored refresh token is one the provider honours.
      const tokenUrl = provider === 'gmail' ? gmail.tokenUrl : graph.tokenUrl.replace('<tenant>', 'contoso');
      const refreshed = await fetch(tokenUrl, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'refresh_token',
          client_id: 'app-id',
          client_secret: 'app-secret',
          refresh_token: String(stored.data.refreshToken),
        }),
      });
      expect(refreshed.status).toBe(200);

      // Single use.
      const replay = await call('finishOAuthConsent', actor, { params: { provider }, query: { code, state } });
      expect(replay.status).toBe(404);
    },
  );

  it("another organization's key cannot finish a consent (404), and does not spend it", async () => {
    const actor = actorOf(randomUUID());
    const created = await connection(actor, 'gmail-oauth', { clientId: 'app-id', clientSecret: 'app-secret' });
    const { code, state } = await consent((await start(actor, 'gmail', created.name)).body.url);
    const stranger = actorOf(randomUUID());
    expect(
      (await call('finishOAuthConsent', stranger, { params: { provider: 'gmail' }, query: { code, state } })).status,
    ).toBe(404);
    expect(
      (await call('finishOAuthConsent', actor, { params: { provider: 'gmail' }, query: { code, state } })).status,
    ).toBe(200);
  });

  it('a code obtained with another PKCE challenge is refused (400) and nothing is stored', async () => {
    const actor = actorOf(randomUUID());
    const created = await connection(actor, 'gmail-oauth', { clientId: 'app-id', clientSecret: 'app-secret' });
    const { state } = await consent((await start(actor, 'gmail', created.name)).body.url);
    const foreign = identity.authorize(
      new URLSearchParams({
        client_id: 'app-id',
        response_type: 'code',
        redirect_uri: REDIRECT,
        code_challenge: 'x'.repeat(43),
        code_challenge_method: 'S256',
      }),
    ) as { code: string };
    const reply = await call('finishOAuthConsent', actor, {
      params: { provider: 'gmail' },
      query: { code: foreign.code, state },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.detail).toMatch(/invalid_grant/);
    expect((await app.connections.decrypted(created.id, actor.organizationId)).data.refreshToken).toBeUndefined();
  });

  it('an expired consent is refused', async () => {
    const actor = actorOf(randomUUID());
    const created = await connection(actor, 'gmail-oauth', { clientId: 'app-id', clientSecret: 'app-secret' });
    const { code, state } = await consent((await start(actor, 'gmail', created.name)).body.url);
    now += 601_000;
    const reply = await call('finishOAuthConsent', actor, { params: { provider: 'gmail' }, query: { code, state } });
    expect(reply.status).toBe(400);
    expect(reply.body.detail).toMatch(/expired/);
  });

  it('bad input answers 4xx and stores nothing', async () => {
    const actor = actorOf(randomUUID());
    const created = await connection(actor, 'gmail-oauth', { clientId: 'app-id', clientSecret: 'app-secret' });
    const count = async () =>
      Number(
        (
          await store.db
            .selectFrom('catalog_oauth_consents')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('organization_id', '=', actor.organizationId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect((await start(actor, 'yahoo', created.name)).status).toBe(404);
    expect((await start(actor, 'gmail', '')).status).toBe(400);
    expect((await start(actor, 'gmail', created.name, 'javascript:alert(1)')).status).toBe(400);
    expect((await start(actor, 'gmail', 'no-such-connection')).status).toBe(404);
    expect((await start(actor, 'outlook', created.name)).status).toBe(404);
    expect(
      (await call('finishOAuthConsent', actor, { params: { provider: 'gmail' }, query: { state: 'x' } })).status,
    ).toBe(400);
    expect(await count()).toBe(0);
    const restricted = actorOf(actor.organizationId, { processIds: [randomUUID()] });
    expect((await start(restricted, 'gmail', created.name)).status).toBe(403);
  });

  it('at most WEFT_OAUTH_MAX_PENDING_CONSENTS consents are in flight per organization', async () => {
    const actor = actorOf(randomUUID());
    const created = await connection(actor, 'gmail-oauth', { clientId: 'app-id', clientSecret: 'app-secret' });
    for (let n = 0; n < 3; n++) expect((await start(actor, 'gmail', created.name)).status).toBe(200);
    expect((await start(actor, 'gmail', created.name)).status).toBe(429);
    now += 601_000;
    expect((await start(actor, 'gmail', created.name)).status).toBe(200);
  });
});
