import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { openTestStore, type TestStore } from '../../../libs/event-store/test/support/test-database.js';
import { gmailListenerFactory, outlookListenerFactory } from '../src/adapters/mail/index.js';
import { MailTestClock } from './support/mail-clock.js';
import {
  ACCOUNT,
  addOAuthConnection,
  oauthConfig,
  startLocalProviders,
  type LocalProviders,
  type ProviderName,
} from './support/mail-providers.js';
import { MailTestWorld, replicaContext } from './support/mail-test-context.js';

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const factories = { gmail: gmailListenerFactory, outlook: outlookListenerFactory };

describe('mail trigger credentials', () => {
  let testStore: TestStore;
  let clock: MailTestClock;
  let providers: LocalProviders;
  let world: MailTestWorld;

  beforeAll(async () => {
    testStore = await openTestStore('pglite');
  });

  afterAll(async () => {
    await testStore.dispose();
  });

  beforeEach(async () => {
    clock = new MailTestClock(T0);
    providers = await startLocalProviders(clock);
    world = new MailTestWorld();
  });

  afterEach(async () => {
    await providers.close();
  });

  const listen = async (provider: ProviderName, config: Record<string, unknown>) => {
    const replica = replicaContext({
      world,
      store: testStore.store,
      clock,
      processId: randomUUID(),
      nodeId: 'in',
      config,
    });
    const listener = factories[provider](providers.options())(replica.context);
    await listener.start();
    await clock.parked(1);
    return { replica, listener };
  };

  const pollOnce = async (): Promise<void> => {
    clock.advanceToNextWake();
    await clock.parked(1);
  };

  describe.each<ProviderName>(['gmail', 'outlook'])('%s oauth', (provider) => {
    it('refreshes on a 401, stores the new token, and polls on', async () => {
      const refreshToken = addOAuthConnection(world, providers, provider);
      const { listener } = await listen(provider, oauthConfig(provider));
      expect(providers.identity.grants.refresh_token).toBe(1);
      const first = world.connectionUpdates.at(-1)!.data;
      expect(first).toMatchObject({ accessToken: expect.any(String), refreshToken, clientId: 'weft-client' });

      providers.identity.expireAccessTokens();
      providers.mailboxes.deliver(ACCOUNT, {
        from: 'a@x.test',
        subject: 'after expiry',
        receivedAt: clock.now().getTime() + 500,
      });
      await pollOnce();
      expect(providers.identity.unauthorized).toBeGreaterThanOrEqual(1);
      expect(providers.identity.grants.refresh_token).toBe(2);
      expect(world.connectionUpdates.at(-1)!.data.accessToken).not.toBe(first.accessToken);
      expect(world.connections.get('mail')!.data.accessToken).toBe(world.connectionUpdates.at(-1)!.data.accessToken);
      expect(world.firings.map((firing) => firing.input.subject)).toEqual(['after expiry']);
      await listener.stop();
    });

    it('refreshes a token about to expire before using it (no 401)', async () => {
      addOAuthConnection(world, providers, provider);
      const connection = world.connections.get('mail')!;
      // Gmail's client reads the wall clock, ours the test clock: both see 30 s left, inside the 60 s margin.
      const expiresAt = (provider === 'gmail' ? Date.now() : clock.now().getTime()) + 30_000;
      world.connections.set('mail', {
        ...connection,
        data: { ...connection.data, accessToken: 'at-unknown', accessTokenExpiresAt: expiresAt },
      });
      const { listener } = await listen(provider, oauthConfig(provider));
      expect(providers.identity.unauthorized).toBe(0);
      expect(providers.identity.grants.refresh_token).toBe(1);
      await listener.stop();
    });

    it('a refused refresh token is a reported error, never a leaked secret', async () => {
      addOAuthConnection(world, providers, provider);
      const connection = world.connections.get('mail')!;
      world.connections.set('mail', { ...connection, data: { ...connection.data, refreshToken: 'rt-revoked' } });
      const replica = replicaContext({
        world,
        store: testStore.store,
        clock,
        processId: randomUUID(),
        nodeId: 'in',
        config: oauthConfig(provider),
      });
      const listener = factories[provider](providers.options())(replica.context);
      const failure = await listener.start().then(
        () => 'started',
        (error: Error) => error.message,
      );
      expect(failure).toMatch(/invalid_grant/);
      expect(failure).not.toMatch(/weft-client-secret|rt-revoked/);
      expect(world.firings).toEqual([]);
    });
  });

  describe('gmail service account', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const clientEmail = 'weft-reader@project.iam.gserviceaccount.test';

    beforeEach(() => {
      providers.identity.registerServiceAccount(
        clientEmail,
        publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      );
      world.addConnection({
        id: 'sa',
        name: 'sa',
        type: 'google-service-account',
        data: {
          key: JSON.stringify({
            type: 'service_account',
            client_email: clientEmail,
            private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
            token_uri: 'https://oauth2.googleapis.com/token',
          }),
          allowedImpersonation: ['*@example.test', 'boss@partner.test'],
        },
      });
    });

    const config = (impersonationEmail: string) => ({
      triggerType: 'gmail',
      authMethod: 'service_account',
      serviceAccountId: 'sa',
      impersonationEmail,
      pollingInterval: 1,
    });

    it('signs a JWT for the impersonated mailbox and reads it', async () => {
      providers.mailboxes.deliver('shared@example.test', {
        from: 'a@x.test',
        subject: 'to the group',
        receivedAt: T0 + 500,
      });
      const { listener } = await listen('gmail', config('shared@example.test'));
      await pollOnce();
      expect(providers.identity.grants['urn:ietf:params:oauth:grant-type:jwt-bearer']).toBe(1);
      expect(world.firings.map((firing) => [firing.input.subject, firing.input.receiving_account])).toEqual([
        ['to the group', 'shared@example.test'],
      ]);
      expect(
        providers.gmail.requests.some((request) => request.includes('/users/shared%40example.test/messages')),
      ).toBe(true);
      await listener.stop();
    });

    it('refuses at start a target outside allowedImpersonation, before asking for any token', async () => {
      const replica = replicaContext({
        world,
        store: testStore.store,
        clock,
        processId: randomUUID(),
        nodeId: 'in',
        config: config('ceo@other.test'),
      });
      await expect(gmailListenerFactory(providers.options())(replica.context).start()).rejects.toThrow(
        /may not impersonate ceo@other.test/,
      );
      expect(providers.identity.grants['urn:ietf:params:oauth:grant-type:jwt-bearer']).toBeUndefined();
    });
  });
});
