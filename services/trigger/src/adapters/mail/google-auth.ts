import { JWT, OAuth2Client } from 'google-auth-library';
import type { ListenerContext } from '../../application/listener-port.js';
import { impersonationAllowed } from '../../domain/mail/impersonation.js';
import type { MailTriggerConfig } from '../../domain/mail/mail-trigger-config.js';
import { MailConfigError } from '../../domain/mail/mail-trigger-config.js';

export const GMAIL_READONLY_SCOPE = 'https://www.googleapis.com/auth/gmail.readonly';
export const DEFAULT_GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Refresh this long before expiry, so no poll starts with a token about to lapse. */
const EAGER_REFRESH_MS = 60_000;

const field = (data: Record<string, unknown>, name: string, connection: string): string => {
  const value = data[name];
  if (typeof value !== 'string' || value === '') throw new MailConfigError(`connection ${connection} has no ${name}`);
  return value;
};

/**
 * The OAuth client of a `gmail-oauth` connection: it refreshes before expiry and on a 401, and each
 * new token is written back (the catalog stores it encrypted), so a restart does not refresh again.
 */
export async function gmailOAuthClient(
  context: ListenerContext,
  connectionId: string,
  tokenUrl: string,
): Promise<OAuth2Client> {
  const connection = await context.connection(connectionId);
  if (connection.type !== 'gmail-oauth')
    throw new MailConfigError(`connection ${connectionId} is not a gmail-oauth connection`);
  const data = connection.data;
  const client = new OAuth2Client({
    clientId: field(data, 'clientId', connectionId),
    clientSecret: field(data, 'clientSecret', connectionId),
    endpoints: { oauth2TokenUrl: tokenUrl },
    eagerRefreshThresholdMillis: EAGER_REFRESH_MS,
    forceRefreshOnFailure: true,
  });
  client.setCredentials({
    refresh_token: field(data, 'refreshToken', connectionId),
    ...(typeof data.accessToken === 'string' ? { access_token: data.accessToken } : {}),
    ...(typeof data.accessTokenExpiresAt === 'number' ? { expiry_date: data.accessTokenExpiresAt } : {}),
  });
  let stored = data;
  client.on('tokens', (tokens) => {
    stored = {
      ...stored,
      ...(tokens.access_token ? { accessToken: tokens.access_token } : {}),
      ...(tokens.expiry_date ? { accessTokenExpiresAt: tokens.expiry_date } : {}),
      // Google may rotate the refresh token; the new one replaces the old.
      ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    };
    context.updateConnectionData(connectionId, stored).catch((error: unknown) => {
      context.logger.warn({ connectionId, error: (error as Error).message }, 'could not store refreshed Gmail tokens');
    });
  });
  return client;
}

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
}

/**
 * A JWT client signing for `impersonationEmail` (domain-wide delegation). The target must be in
 * the connection's `allowedImpersonation` list, or the listener refuses to start.
 */
export async function gmailServiceAccountClient(
  context: ListenerContext,
  auth: Extract<MailTriggerConfig['auth'], { method: 'service_account' }>,
  tokenUrl: string,
): Promise<JWT> {
  const connection = await context.connection(auth.serviceAccountId);
  if (connection.type !== 'google-service-account') {
    throw new MailConfigError(`connection ${auth.serviceAccountId} is not a google-service-account connection`);
  }
  const raw = connection.data.key;
  const key = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Partial<ServiceAccountKey> | undefined;
  if (!key?.client_email || !key.private_key) {
    throw new MailConfigError(
      `connection ${auth.serviceAccountId} holds no service-account key (client_email, private_key)`,
    );
  }
  const allowed = Array.isArray(connection.data.allowedImpersonation)
    ? connection.data.allowedImpersonation.filter((entry): entry is string => typeof entry === 'string')
    : [];
  if (!impersonationAllowed(auth.impersonationEmail, allowed)) {
    throw new MailConfigError(
      `service account ${auth.serviceAccountId} may not impersonate ${auth.impersonationEmail} (not in allowedImpersonation)`,
    );
  }
  const jwt = new JWT({
    email: key.client_email,
    key: key.private_key,
    // Without scopes the client signs its own bearer JWT and never asks the token endpoint.
    scopes: [GMAIL_READONLY_SCOPE],
    subject: auth.impersonationEmail,
    eagerRefreshThresholdMillis: EAGER_REFRESH_MS,
    forceRefreshOnFailure: true,
  });
  if (tokenUrl !== DEFAULT_GOOGLE_TOKEN_URL) redirectTokenRequests(jwt, tokenUrl);
  return jwt;
}

/** gtoken posts to Google's fixed token URL and ignores `endpoints`: point its requests at `tokenUrl`. */
function redirectTokenRequests(jwt: JWT, tokenUrl: string): void {
  jwt.transporter.interceptors.request.add({
    resolved: (options) => {
      if (String(options.url) === DEFAULT_GOOGLE_TOKEN_URL) options.url = new URL(tokenUrl);
      return Promise.resolve(options);
    },
  });
}
