import { generateKeyPairSync } from 'node:crypto';
import { ACCOUNT, addOAuthConnection, oauthConfig, type ProviderName } from './support/mail-providers.js';
import { MailRig, T0 } from './support/mail-rig.js';

describe('mail trigger credentials', () => {
  const rig = MailRig.use();

  describe.each<ProviderName>(['gmail', 'outlook'])('%s oauth', (provider) => {
    it('refreshes on a 401, stores the new token, and polls on', async () => {
      const refreshToken = addOAuthConnection(rig.world, rig.providers, provider);
      const { listener } = await rig.listen(provider, oauthConfig(provider));
      expect(rig.providers.identity.grants.refresh_token).toBe(1);
      const first = rig.world.connectionUpdates.at(-1)!.data;
      expect(first).toMatchObject({ accessToken: expect.any(String), refreshToken, clientId: 'weft-client' });

      rig.providers.identity.expireAccessTokens();
      rig.providers.mailboxes.deliver(ACCOUNT, {
        from: 'a@x.test',
        subject: 'after expiry',
        receivedAt: rig.clock.now().getTime() + 500,
      });
      await rig.pollOnce();
      expect(rig.providers.identity.unauthorized).toBeGreaterThanOrEqual(1);
      expect(rig.providers.identity.grants.refresh_token).toBe(2);
      expect(rig.world.connectionUpdates.at(-1)!.data.accessToken).not.toBe(first.accessToken);
      expect(rig.world.connections.get('mail')!.data.accessToken).toBe(
        rig.world.connectionUpdates.at(-1)!.data.accessToken,
      );
      expect(rig.world.firings.map((firing) => firing.input.subject)).toEqual(['after expiry']);
      await listener.stop();
    });

    it('refreshes a token about to expire before using it (no 401)', async () => {
      addOAuthConnection(rig.world, rig.providers, provider);
      const connection = rig.world.connections.get('mail')!;
      // Gmail's client reads the wall clock, ours the test clock: both see 30 s left, inside the 60 s margin.
      const expiresAt = (provider === 'gmail' ? Date.now() : rig.clock.now().getTime()) + 30_000;
      rig.world.connections.set('mail', {
        ...connection,
        data: { ...connection.data, accessToken: 'at-unknown', accessTokenExpiresAt: expiresAt },
      });
      const { listener } = await rig.listen(provider, oauthConfig(provider));
      expect(rig.providers.identity.unauthorized).toBe(0);
      expect(rig.providers.identity.grants.refresh_token).toBe(1);
      await listener.stop();
    });

    it('a refused refresh token is a reported error, never a leaked secret', async () => {
      addOAuthConnection(rig.world, rig.providers, provider);
      const connection = rig.world.connections.get('mail')!;
      rig.world.connections.set('mail', { ...connection, data: { ...connection.data, refreshToken: 'rt-revoked' } });
      const { listener } = rig.listener(provider, oauthConfig(provider));
      const failure = await listener.start().then(
        () => 'started',
        (error: Error) => error.message,
      );
      expect(failure).toMatch(/invalid_grant/);
      expect(failure).not.toMatch(/weft-client-secret|rt-revoked/);
      expect(rig.world.firings).toEqual([]);
    });
  });

  describe('gmail service account', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const clientEmail = 'weft-reader@project.iam.gserviceaccount.test';

    beforeEach(() => {
      rig.providers.identity.registerServiceAccount(
        clientEmail,
        publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      );
      rig.world.addConnection({
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
      rig.providers.mailboxes.deliver('shared@example.test', {
        from: 'a@x.test',
        subject: 'to the group',
        receivedAt: T0 + 500,
      });
      const { listener } = await rig.listen('gmail', config('shared@example.test'));
      await rig.pollOnce();
      expect(rig.providers.identity.grants['urn:ietf:params:oauth:grant-type:jwt-bearer']).toBe(1);
      expect(rig.world.firings.map((firing) => [firing.input.subject, firing.input.receiving_account])).toEqual([
        ['to the group', 'shared@example.test'],
      ]);
      expect(
        rig.providers.gmail.requests.some((request) => request.includes('/users/shared%40example.test/messages')),
      ).toBe(true);
      await listener.stop();
    });

    it('refuses at start a target outside allowedImpersonation, before asking for any token', async () => {
      const { listener } = rig.listener('gmail', config('ceo@other.test'));
      await expect(listener.start()).rejects.toThrow(/may not impersonate ceo@other.test/);
      expect(rig.providers.identity.grants['urn:ietf:params:oauth:grant-type:jwt-bearer']).toBeUndefined();
    });
  });
});
