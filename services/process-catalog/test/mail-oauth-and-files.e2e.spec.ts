import { LocalDiskBlobStorage } from '../../../libs/blob-storage/src/index.js';
import { FakeIdentity, FakeMailboxes, startGmailServer, type GmailServer } from '@weft/mail-provider-servers';
import { setups, startGatewayWithCatalog, type GatewayWithCatalog } from './fixtures/gateway-with-catalog.js';

/**
 * Over HTTP through the real gateway: connecting a Gmail account with the code flow against the
 * local Google servers, and downloading a stored attachment by its files URL (org-scoped).
 */
describe.each(setups)('mail OAuth and files through the gateway ($bus bus, $db)', (setup) => {
  let env: GatewayWithCatalog;
  let google: GmailServer;
  const identity = new FakeIdentity();
  identity.registerClient('app-id', 'app-secret');

  beforeAll(async () => {
    google = await startGmailServer({ mailboxes: new FakeMailboxes(), identity });
    env = await startGatewayWithCatalog(setup, {
      WEFT_GOOGLE_TOKEN_URL: google.tokenUrl,
      WEFT_GOOGLE_AUTH_URL: google.authorizeUrl,
    });
  });

  afterAll(async () => {
    await env.stop();
    await google.close();
  });

  it('start -> consent -> callback stores the account; the answers hold no secret', async () => {
    const org = await env.organization('Mail org');
    const created = await env.http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'gmail-oauth',
      name: 'sales inbox',
      data: { clientId: 'app-id', clientSecret: 'app-secret' },
    });
    expect(created.status).toBe(201);
    const redirect = encodeURIComponent('https://app.example.test/done');
    const started = await env.http(
      'GET',
      `/api/v1/connections/oauth/gmail/start?connectionName=sales%20inbox&redirectUri=${redirect}`,
      org.key,
    );
    expect(started.status).toBe(200);
    const consent = await fetch(started.body.url, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    const query = `code=${back.searchParams.get('code')}&state=${back.searchParams.get('state')}`;

    const other = await env.organization('Other org');
    expect((await env.http('GET', `/api/v1/connections/oauth/gmail/callback?${query}`, other.key)).status).toBe(404);
    const finished = await env.http('GET', `/api/v1/connections/oauth/gmail/callback?${query}`, org.key);
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ id: created.body.id, type: 'gmail-oauth', name: 'sales inbox' });
    expect(JSON.stringify(finished.body)).not.toMatch(/rt-|app-secret/);
    expect(identity.grants.authorization_code).toBeGreaterThanOrEqual(1);

    const problem = await env.http('GET', '/api/v1/connections/oauth/gmail/start?connectionName=x', org.key);
    expect(problem.status).toBe(400);
    expect(problem.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('GET /api/v1/files/<key> serves a file to its organization only', async () => {
    const org = await env.organization('Files org');
    const other = await env.organization('Other files org');
    const blobs = new LocalDiskBlobStorage(env.dataDir);
    await blobs.put(`${org.id}/triggers/p/n/f1/invoice 1.pdf`, Buffer.from('%PDF-1.7'), 'application/pdf');
    await blobs.close();
    const url = `/api/v1/files/${org.id}/triggers/p/n/f1/invoice%201.pdf`;
    const own = await env.gateway.server.inject({ method: 'GET', url, headers: { 'x-api-key': org.key } });
    expect(own.statusCode).toBe(200);
    expect(own.headers['content-type']).toBe('application/pdf');
    expect(own.body).toBe('%PDF-1.7');
    const foreign = await env.gateway.server.inject({ method: 'GET', url, headers: { 'x-api-key': other.key } });
    expect(foreign.statusCode).toBe(404);
    const anonymous = await env.gateway.server.inject({ method: 'GET', url });
    expect(anonymous.statusCode).toBe(401);
  });
});
