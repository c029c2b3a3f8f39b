import { createHash, randomBytes } from 'node:crypto';
import { badRequest, conflict, notFound, ProblemError, type HttpCall } from '@weft/contracts';
import type { Db } from '@weft/event-store';
import type { SealedSecret } from '../domain/connection/events.js';
import {
  consentUrl,
  isOAuthProvider,
  OAUTH_PROVIDERS,
  redirectUriProblem,
  withTenant,
  type OAuthProvider,
  type OAuthProviderEndpoints,
} from '../domain/connection/oauth-consent.js';
import { parseJson } from '../projections/process-projection.js';
import type { Caller, Runtime } from './caller.js';
import type { ConnectionSummary, Connections } from './connections.js';
import { assertUnrestricted } from './process-access.js';
import type { SecretBox } from './secret-box.js';

export interface OAuthConsentSettings {
  endpoints: Record<OAuthProvider, OAuthProviderEndpoints>;
  /** How long a started consent may take to come back (WEFT_OAUTH_STATE_TTL_SECONDS). */
  stateTtlSeconds: number;
  /** Consents in flight per organization (WEFT_OAUTH_MAX_PENDING_CONSENTS). */
  maxPending: number;
  /** Longest wait for the provider's token endpoint. */
  tokenTimeoutMs: number;
}

const hashState = (state: string): string => createHash('sha256').update(state).digest('hex');
const queryText = (call: HttpCall, name: string): string | undefined => {
  const value = call.query[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * The API side of connecting a mail account: `start` answers the provider's consent URL and keeps
 * state and PKCE verifier server-side (hashed / sealed, expiring, single use); `finish` exchanges
 * the code and stores the tokens encrypted in the connection.
 */
export class OAuthConsents {
  constructor(
    private readonly db: Db,
    private readonly connections: Connections,
    private readonly secrets: SecretBox,
    private readonly runtime: Runtime,
    private readonly settings: OAuthConsentSettings,
  ) {}

  async start(call: HttpCall, caller: Caller): Promise<{ url: string; state: string; expiresAt: string }> {
    assertUnrestricted(caller);
    const provider = this.provider(call);
    const name = queryText(call, 'connectionName');
    const redirectUri = queryText(call, 'redirectUri');
    const violations = [
      ...(name && name.length <= 200
        ? []
        : [{ path: '/query/connectionName', message: 'must name the connection (1-200 characters)' }]),
      ...(redirectUriProblem(redirectUri)
        ? [{ path: '/query/redirectUri', message: redirectUriProblem(redirectUri)! }]
        : []),
    ];
    if (violations.length > 0) throw badRequest('invalid OAuth start', violations);
    const organizationId = caller.actor.organizationId;
    const connection = await this.connectionNamed(organizationId, name!, OAUTH_PROVIDERS[provider].connectionType);
    const data = (await this.connections.decrypted(connection.id, organizationId)).data;
    if (typeof data.clientId !== 'string' || typeof data.clientSecret !== 'string') {
      throw badRequest(
        `connection ${name} needs data.clientId and data.clientSecret (the app registered with the provider)`,
      );
    }
    const now = this.runtime.now();
    await this.db.deleteFrom('catalog_oauth_consents').where('expires_at', '<', now).execute();
    const pending = await this.db
      .selectFrom('catalog_oauth_consents')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    if (Number(pending.count) >= this.settings.maxPending) {
      throw new ProblemError(429, `at most ${this.settings.maxPending} OAuth consents may be pending per organization`);
    }
    const state = randomBytes(32).toString('base64url');
    const verifier = randomBytes(48).toString('base64url');
    const expiresAt = new Date(Date.parse(now) + this.settings.stateTtlSeconds * 1000).toISOString();
    const owner = { organizationId, connectionId: connection.id };
    await this.db
      .insertInto('catalog_oauth_consents')
      .values({
        state_hash: hashState(state),
        organization_id: organizationId,
        connection_id: connection.id,
        provider,
        redirect_uri: redirectUri!,
        sealed_verifier: JSON.stringify(this.secrets.seal({ verifier }, owner)),
        expires_at: expiresAt,
      })
      .execute();
    const url = consentUrl({
      provider,
      authUrl: withTenant(this.settings.endpoints[provider].authUrl, data.tenantId),
      clientId: data.clientId,
      redirectUri: redirectUri!,
      state,
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    });
    return { url, state, expiresAt };
  }

  async finish(call: HttpCall, caller: Caller): Promise<ConnectionSummary> {
    assertUnrestricted(caller);
    const provider = this.provider(call);
    const code = queryText(call, 'code');
    const state = queryText(call, 'state');
    if (!code || !state) {
      throw badRequest('invalid OAuth callback', [
        ...(code ? [] : [{ path: '/query/code', message: 'is required' }]),
        ...(state ? [] : [{ path: '/query/state', message: 'is required' }]),
      ]);
    }
    const organizationId = caller.actor.organizationId;
    // Single use: the row goes with the first callback, whatever the exchange answers.
    const row = await this.db
      .deleteFrom('catalog_oauth_consents')
      .where('state_hash', '=', hashState(state))
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('no OAuth consent in flight with this state');
    if (String(row.expires_at) < this.runtime.now()) throw badRequest('the OAuth consent expired; start it again');
    const connectionId = String(row.connection_id);
    const owner = { organizationId, connectionId };
    const { verifier } = this.secrets.open(parseJson(row.sealed_verifier) as SealedSecret, owner) as {
      verifier: string;
    };
    const connection = await this.connections.decrypted(connectionId, organizationId);
    const tokens = await this.exchange(provider, connection.data, {
      code,
      verifier,
      redirectUri: String(row.redirect_uri),
    });
    await this.connections.replaceData(connectionId, organizationId, { ...connection.data, ...tokens }, caller);
    return this.connections.get(connectionId, caller);
  }

  private provider(call: HttpCall): OAuthProvider {
    const provider = call.params.provider ?? '';
    if (!isOAuthProvider(provider)) throw notFound(`no OAuth provider ${provider}; use gmail or outlook`);
    return provider;
  }

  private async connectionNamed(organizationId: string, name: string, type: string): Promise<{ id: string }> {
    const rows = await this.db
      .selectFrom('catalog_connections')
      .select(['id'])
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .where('type', '=', type)
      .limit(2)
      .execute();
    if (rows.length === 0) {
      throw notFound(`no ${type} connection named ${name}; create it with data {clientId, clientSecret} first`);
    }
    if (rows.length > 1) throw conflict(`several ${type} connections are named ${name}`);
    return { id: String(rows[0]!.id) };
  }

  private async exchange(
    provider: OAuthProvider,
    data: Record<string, unknown>,
    grant: { code: string; verifier: string; redirectUri: string },
  ): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(withTenant(this.settings.endpoints[provider].tokenUrl, data.tenantId), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: grant.code,
          code_verifier: grant.verifier,
          redirect_uri: grant.redirectUri,
          client_id: String(data.clientId),
          client_secret: String(data.clientSecret),
        }),
        signal: AbortSignal.timeout(this.settings.tokenTimeoutMs),
      });
    } catch {
      throw new ProblemError(502, `the ${provider} token endpoint could not be reached`);
    }
    const answer = (await response.json().catch(() => ({}))) as {
      access_token?: string;
      refresh_token?: string;
      expires_in?: number;
      error?: string;
    };
    if (!response.ok || !answer.refresh_token) {
      // Only the provider's error code: its body may echo what was sent.
      const reason = typeof answer.error === 'string' ? answer.error.slice(0, 100) : `status ${response.status}`;
      throw badRequest(`the ${provider} token endpoint refused the authorization code (${reason})`);
    }
    return {
      refreshToken: answer.refresh_token,
      ...(answer.access_token
        ? {
            accessToken: answer.access_token,
            accessTokenExpiresAt: Date.parse(this.runtime.now()) + (answer.expires_in ?? 3600) * 1000,
          }
        : {}),
    };
  }
}
