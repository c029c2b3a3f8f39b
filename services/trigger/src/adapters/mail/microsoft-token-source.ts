import type { ListenerContext } from '../../application/listener-port.js';
import { MailConfigError } from '../../domain/mail/mail-trigger-config.js';
import { MailProviderError, retryAfterMs } from './mailbox-client.js';

export const DEFAULT_MICROSOFT_TOKEN_URL = 'https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token';
export const GRAPH_MAIL_SCOPE = 'https://graph.microsoft.com/Mail.Read offline_access';
/** Refresh this long before expiry, so no request goes out with a token about to lapse. */
const EAGER_REFRESH_MS = 60_000;

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
}

/**
 * Access tokens of an `outlook-oauth` connection from the Microsoft identity platform: refreshed
 * before they expire and on demand after a 401; Microsoft rotates refresh tokens, so each new pair
 * is written back (stored encrypted by the catalog).
 */
export class MicrosoftTokenSource {
  private data: Record<string, unknown>;
  private refreshing: Promise<string> | undefined;

  private constructor(
    private readonly context: ListenerContext,
    private readonly connectionId: string,
    data: Record<string, unknown>,
    private readonly tokenUrl: string,
    private readonly now: () => number,
  ) {
    this.data = data;
  }

  static async open(
    context: ListenerContext,
    connectionId: string,
    tokenUrlTemplate: string,
    now: () => number,
  ): Promise<MicrosoftTokenSource> {
    const connection = await context.connection(connectionId);
    if (connection.type !== 'outlook-oauth') {
      throw new MailConfigError(`connection ${connectionId} is not an outlook-oauth connection`);
    }
    for (const name of ['clientId', 'clientSecret', 'refreshToken']) {
      if (typeof connection.data[name] !== 'string' || connection.data[name] === '') {
        throw new MailConfigError(`connection ${connectionId} has no ${name}`);
      }
    }
    const tenant =
      typeof connection.data.tenantId === 'string' && connection.data.tenantId ? connection.data.tenantId : 'common';
    const tokenUrl = tokenUrlTemplate.replaceAll('<tenant>', encodeURIComponent(tenant));
    return new MicrosoftTokenSource(context, connectionId, connection.data, tokenUrl, now);
  }

  /** A token valid for at least the eager-refresh margin. */
  async accessToken(): Promise<string> {
    const token = this.data.accessToken;
    const expiresAt = this.data.accessTokenExpiresAt;
    if (typeof token === 'string' && typeof expiresAt === 'number' && expiresAt - EAGER_REFRESH_MS > this.now())
      return token;
    return this.refresh();
  }

  /** A new token now (after a 401); concurrent callers share one refresh. */
  refresh(): Promise<string> {
    this.refreshing ??= this.requestToken().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async requestToken(): Promise<string> {
    const response = await fetch(this.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: String(this.data.clientId),
        client_secret: String(this.data.clientSecret),
        refresh_token: String(this.data.refreshToken),
        scope: GRAPH_MAIL_SCOPE,
      }),
    });
    const answer = (await response.json().catch(() => ({}))) as TokenAnswer;
    if (!response.ok || !answer.access_token) {
      // The token endpoint's error code only (invalid_grant ...): its body may echo what was sent.
      throw new MailProviderError(
        `outlook: token refresh refused (${response.status} ${answer.error ?? ''})`.trim(),
        response.status,
        retryAfterMs(response.headers.get('retry-after'), this.now()),
      );
    }
    this.data = {
      ...this.data,
      accessToken: answer.access_token,
      accessTokenExpiresAt: this.now() + (answer.expires_in ?? 3600) * 1000,
      ...(answer.refresh_token ? { refreshToken: answer.refresh_token } : {}),
    };
    await this.context.updateConnectionData(this.connectionId, this.data);
    return answer.access_token;
  }
}
