import {
  FakeIdentity,
  FakeMailboxes,
  startGmailServer,
  startGraphServer,
  type GmailServer,
  type GraphServer,
} from '@weft/mail-provider-servers';
import type { MailListenerOptions } from '../../src/adapters/mail/index.js';
import type { MailTestClock } from './mail-clock.js';
import type { MailTestWorld } from './mail-test-context.js';

export const ACCOUNT = 'user@example.test';
export const CLIENT_ID = 'weft-client';
export const CLIENT_SECRET = 'weft-client-secret';

export type ProviderName = 'gmail' | 'outlook';

/** Both local providers, their mail and tokens on the test's clock. */
export interface LocalProviders {
  mailboxes: FakeMailboxes;
  identity: FakeIdentity;
  gmail: GmailServer;
  graph: GraphServer;
  options(overrides?: Partial<MailListenerOptions>): MailListenerOptions;
  close(): Promise<void>;
}

export async function startLocalProviders(clock: MailTestClock): Promise<LocalProviders> {
  const now = (): number => clock.now().getTime();
  const mailboxes = new FakeMailboxes(now);
  const identity = new FakeIdentity(3600, now);
  identity.registerClient(CLIENT_ID, CLIENT_SECRET);
  const gmail = await startGmailServer({ mailboxes, identity });
  const graph = await startGraphServer({ mailboxes, identity });
  return {
    mailboxes,
    identity,
    gmail,
    graph,
    options: (overrides = {}) => ({
      gmailApiUrl: gmail.apiUrl,
      googleTokenUrl: gmail.tokenUrl,
      graphApiUrl: graph.graphUrl,
      microsoftTokenUrl: graph.tokenUrl,
      clock,
      pageSize: 20,
      pollOverlapMs: 60_000,
      claimLeaseMs: 10_000,
      ...overrides,
    }),
    close: async () => {
      await gmail.close();
      await graph.close();
    },
  };
}

/** An OAuth connection named `mail` for `account`, as a finished consent leaves it. */
export function addOAuthConnection(
  world: MailTestWorld,
  providers: LocalProviders,
  provider: ProviderName,
  account = ACCOUNT,
): string {
  const refreshToken = providers.identity.issueRefreshToken(CLIENT_ID, account);
  world.addConnection({
    id: 'mail',
    name: 'mail',
    type: provider === 'gmail' ? 'gmail-oauth' : 'outlook-oauth',
    data: {
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      refreshToken,
      ...(provider === 'outlook' ? { tenantId: 'contoso' } : {}),
    },
  });
  return refreshToken;
}

export const oauthConfig = (provider: ProviderName, fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  triggerType: provider,
  authMethod: 'oauth',
  connectionId: 'mail',
  pollingInterval: 1,
  ...fields,
});
