import { MailProviderError, retryAfterMs } from './mailbox-client.js';

interface HttpLikeError {
  message?: string;
  status?: number;
  statusCode?: number;
  code?: number | string;
  response?: { status?: number; headers?: unknown };
  headers?: unknown;
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/** A googleapis (gaxios) or Graph client error as a MailProviderError carrying status and Retry-After. */
export function toMailProviderError(error: unknown, provider: string, now: number): unknown {
  if (error instanceof MailProviderError || typeof error !== 'object' || error === null) return error;
  const http = error as HttpLikeError;
  const status =
    http.response?.status ?? http.status ?? http.statusCode ?? (typeof http.code === 'number' ? http.code : undefined);
  if (status === undefined) return error;
  const wait = retryAfterMs(header(http.response?.headers ?? http.headers, 'retry-after'), now);
  const reason = status === 429 ? 'rate limited' : status === 401 ? 'token refused' : `status ${status}`;
  return new MailProviderError(`${provider}: ${reason}: ${http.message ?? ''}`.trim(), status, wait);
}
