/** The OAuth 2.0 authorization-code flow with PKCE (RFC 7636) for the mail connections. Pure. */

export type OAuthProvider = 'gmail' | 'outlook';

export interface OAuthProviderEndpoints {
  /** May hold `<tenant>` (Microsoft). */
  authUrl: string;
  tokenUrl: string;
}

export const OAUTH_PROVIDERS: Record<
  OAuthProvider,
  { connectionType: string; scope: string; extra: Record<string, string> }
> = {
  // offline + consent: Google gives a refresh token only then.
  gmail: {
    connectionType: 'gmail-oauth',
    scope: 'https://www.googleapis.com/auth/gmail.readonly',
    extra: { access_type: 'offline', prompt: 'consent' },
  },
  outlook: {
    connectionType: 'outlook-oauth',
    scope: 'https://graph.microsoft.com/Mail.Read offline_access',
    extra: {},
  },
};

export const isOAuthProvider = (value: string): value is OAuthProvider => value === 'gmail' || value === 'outlook';

export const withTenant = (url: string, tenantId: unknown): string =>
  url.replaceAll('<tenant>', encodeURIComponent(typeof tenantId === 'string' && tenantId !== '' ? tenantId : 'common'));

/** The consent page address the user opens. */
export function consentUrl(options: {
  provider: OAuthProvider;
  authUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  codeChallenge: string;
}): string {
  const { provider } = options;
  const url = new URL(options.authUrl);
  const params: Record<string, string> = {
    client_id: options.clientId,
    response_type: 'code',
    redirect_uri: options.redirectUri,
    scope: OAUTH_PROVIDERS[provider].scope,
    state: options.state,
    code_challenge: options.codeChallenge,
    code_challenge_method: 'S256',
    ...OAUTH_PROVIDERS[provider].extra,
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

/** A redirect URI the consent may come back to: an absolute http(s) address without a fragment. */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) return 'must be an absolute http(s) URL';
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an absolute http(s) URL';
    if (url.hash) return 'must not have a fragment';
    return undefined;
  } catch {
    return 'must be an absolute http(s) URL';
  }
}
