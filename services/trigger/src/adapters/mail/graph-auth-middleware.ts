import type { Context, Middleware } from '@microsoft/microsoft-graph-client';
import type { MicrosoftTokenSource } from './microsoft-token-source.js';

function setAuthorization(context: Context, token: string): void {
  context.options ??= {};
  const headers = context.options.headers;
  if (headers instanceof Headers) headers.set('Authorization', `Bearer ${token}`);
  else
    context.options.headers = { ...(headers as Record<string, string> | undefined), Authorization: `Bearer ${token}` };
}

/**
 * Puts the bearer token on every Graph request and, on a 401, refreshes once and resends. The
 * stock auth handler drops Authorization for any host that is not https Graph (TOOLCHAIN.md),
 * which would leave a local test server unauthenticated; this one is chained to HTTPMessageHandler.
 */
export class GraphAuthMiddleware implements Middleware {
  private next: Middleware | undefined;

  constructor(private readonly tokens: MicrosoftTokenSource) {}

  async execute(context: Context): Promise<void> {
    setAuthorization(context, await this.tokens.accessToken());
    await this.next!.execute(context);
    if (context.response?.status === 401) {
      setAuthorization(context, await this.tokens.refresh());
      await this.next!.execute(context);
    }
  }

  setNext(next: Middleware): void {
    this.next = next;
  }
}
