import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from './http-server.js';

/** gtoken signs for Google's real token URL even when its request is redirected to this server. */
const audiences = (tokenUrl: string): string[] => [tokenUrl, 'https://oauth2.googleapis.com/token'];

interface Grant {
  account: string;
  clientId: string;
}

interface PendingCode extends Grant {
  redirectUri: string;
  codeChallenge?: string;
}

/**
 * The accounts, clients and tokens of a fake provider: refresh and authorization-code grants,
 * PKCE, JWT-bearer grants for service accounts with domain-wide delegation, access tokens that
 * expire (then the APIs answer 401), and injected 429s.
 */
export class FakeIdentity {
  private readonly clients = new Map<string, string>();
  private readonly refreshTokens = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, { account: string; expiresAt: number }>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly serviceAccounts = new Map<string, string>();
  /** Which accounts may open which shared mailboxes (Graph). */
  private readonly delegates = new Map<string, Set<string>>();
  private throttled: { count: number; retryAfterSeconds: number } = { count: 0, retryAfterSeconds: 0 };
  /** API calls refused for a missing, unknown or expired token. */
  unauthorized = 0;
  /** Token requests answered, by grant type: what tests count. */
  readonly grants: Record<string, number> = {};
  /** The account the consent page signs in when no login_hint is given. */
  defaultAccount = 'user@example.test';

  constructor(
    readonly tokenLifetimeSeconds = 3600,
    private readonly now: () => number = Date.now,
  ) {}

  registerClient(clientId: string, clientSecret: string): void {
    this.clients.set(clientId, clientSecret);
  }

  /** A refresh token for `account` through `clientId`, as a finished consent would have given. */
  issueRefreshToken(clientId: string, account: string): string {
    const token = `rt-${randomBytes(12).toString('hex')}`;
    this.refreshTokens.set(token, { clientId, account: account.toLowerCase() });
    return token;
  }

  /** A service account (its public key) allowed to impersonate any account (domain-wide delegation). */
  registerServiceAccount(clientEmail: string, publicKeyPem: string): void {
    this.serviceAccounts.set(clientEmail, publicKeyPem);
  }

  grantSharedMailbox(mailbox: string, account: string): void {
    const key = mailbox.toLowerCase();
    if (!this.delegates.has(key)) this.delegates.set(key, new Set());
    this.delegates.get(key)!.add(account.toLowerCase());
  }

  canOpen(account: string, mailbox: string): boolean {
    return account === mailbox.toLowerCase() || (this.delegates.get(mailbox.toLowerCase())?.has(account) ?? false);
  }

  /** Every access token issued so far stops working (the APIs answer 401). */
  expireAccessTokens(): void {
    for (const token of this.accessTokens.values()) token.expiresAt = 0;
  }

  /** The next `count` API calls answer 429 with Retry-After. */
  throttle(count: number, retryAfterSeconds: number): void {
    this.throttled = { count, retryAfterSeconds };
  }

  /** Answers a 429 when throttled (and consumes one), else false. */
  takeThrottle(response: ServerResponse, body: unknown): boolean {
    if (this.throttled.count <= 0) return false;
    this.throttled.count -= 1;
    sendJson(response, 429, body, { 'retry-after': String(this.throttled.retryAfterSeconds) });
    return true;
  }

  /** The account of a live bearer token, or undefined (expired, unknown, absent). */
  authenticate(authorization: string | undefined): string | undefined {
    const match = /^Bearer (.+)$/i.exec(authorization ?? '');
    const token = match ? this.accessTokens.get(match[1]!) : undefined;
    if (token && token.expiresAt > this.now()) return token.account;
    this.unauthorized += 1;
    return undefined;
  }

  /** The consent step: answers the code a redirect would carry. */
  authorize(params: URLSearchParams): { code: string } | { error: string } {
    const clientId = params.get('client_id') ?? '';
    const redirectUri = params.get('redirect_uri') ?? '';
    if (!this.clients.has(clientId)) return { error: 'unauthorized_client' };
    if (params.get('response_type') !== 'code' || !redirectUri) return { error: 'invalid_request' };
    const challenge = params.get('code_challenge') ?? undefined;
    if (challenge && params.get('code_challenge_method') !== 'S256') return { error: 'invalid_request' };
    const code = `code-${randomBytes(12).toString('hex')}`;
    const account = (params.get('login_hint') ?? this.defaultAccount).toLowerCase();
    this.codes.set(code, { account, clientId, redirectUri, ...(challenge ? { codeChallenge: challenge } : {}) });
    return { code };
  }

  /** The authorize endpoint over HTTP: a 302 back to redirect_uri with the code (and state), or 400 JSON. */
  consent(params: URLSearchParams, response: ServerResponse): void {
    const answer = this.authorize(params);
    if ('error' in answer) return sendJson(response, 400, answer);
    const target = new URL(params.get('redirect_uri')!);
    target.searchParams.set('code', answer.code);
    if (params.has('state')) target.searchParams.set('state', params.get('state')!);
    response.writeHead(302, { location: target.toString() }).end();
  }

  /** The token endpoint (form-encoded grant), answered in OAuth 2.0 JSON. */
  token(form: URLSearchParams, response: ServerResponse, tokenUrl: string): void {
    const grantType = form.get('grant_type') ?? '';
    this.grants[grantType] = (this.grants[grantType] ?? 0) + 1;
    const fail = (error: string, status = 400): void => sendJson(response, status, { error });
    if (grantType === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const account = this.verifyAssertion(form.get('assertion') ?? '', tokenUrl);
      return account ? this.answerToken(response, account) : fail('invalid_grant');
    }
    const clientId = form.get('client_id') ?? '';
    if (this.clients.get(clientId) !== (form.get('client_secret') ?? undefined)) return fail('invalid_client', 401);
    if (grantType === 'refresh_token') {
      const grant = this.refreshTokens.get(form.get('refresh_token') ?? '');
      if (!grant || grant.clientId !== clientId) return fail('invalid_grant');
      return this.answerToken(response, grant.account);
    }
    if (grantType === 'authorization_code') {
      const code = form.get('code') ?? '';
      const pending = this.codes.get(code);
      this.codes.delete(code);
      if (!pending || pending.clientId !== clientId || pending.redirectUri !== form.get('redirect_uri')) {
        return fail('invalid_grant');
      }
      if (pending.codeChallenge) {
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== pending.codeChallenge)
          return fail('invalid_grant');
      }
      return this.answerToken(response, pending.account, this.issueRefreshToken(clientId, pending.account));
    }
    fail('unsupported_grant_type');
  }

  private answerToken(response: ServerResponse, account: string, refreshToken?: string): void {
    const accessToken = `at-${randomBytes(12).toString('hex')}`;
    this.accessTokens.set(accessToken, { account, expiresAt: this.now() + this.tokenLifetimeSeconds * 1000 });
    sendJson(response, 200, {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: this.tokenLifetimeSeconds,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    });
  }

  /** A service account's signed JWT (RS256): its issuer is known, the signature and audience hold; answers `sub`. */
  private verifyAssertion(assertion: string, tokenUrl: string): string | undefined {
    const [header, payload, signature] = assertion.split('.');
    if (!header || !payload || !signature) return undefined;
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const publicKey = this.serviceAccounts.get(String(claims.iss));
    if (!publicKey) return undefined;
    const valid = verify(
      'RSA-SHA256',
      Buffer.from(`${header}.${payload}`),
      createPublicKey(publicKey),
      Buffer.from(signature, 'base64url'),
    );
    if (
      !valid ||
      !audiences(tokenUrl).includes(String(claims.aud)) ||
      typeof claims.exp !== 'number' ||
      claims.exp * 1000 < this.now()
    ) {
      return undefined;
    }
    return typeof claims.sub === 'string' ? claims.sub.toLowerCase() : String(claims.iss);
  }
}
