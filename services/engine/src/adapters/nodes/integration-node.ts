import type { DecryptedConnection, FileReference, HttpIntegrationConfig, IntegrationNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor, type NodeRunContext } from '../../domain/nodes/node-executor.js';
import type { Response } from 'undici';
import { readCappedBody, ResponseTooLargeError } from '../http/capped-body.js';
import { guardedFetch, OutboundBlockedError, OutboundGuard } from '../http/outbound-guard.js';
import { sendEmail } from './email-integration.js';
import { nodeFileSource, type NodeFileSource } from './node-files.js';
import { signedWebhookHeaders, webhookDelivery, webhookSecret } from './webhook-integration.js';

/**
 * HTTP request node on Node's fetch: method, URL, headers, query, JSON/form/text body, auth from
 * an `http` connection, a timeout per attempt, retries on 5xx and 429 with exponential backoff
 * (Retry-After honoured). Bodies are read up to a byte cap. Binary responses are stored as blobs
 * and returned as file references. `kind: "email"` sends through SMTP instead; `kind: "webhook"` is
 * a POST of a JSON body signed with HMAC-SHA256.
 */
export interface BlobSink {
  /** Stores a file a node produced; its key starts with the running organization's id. */
  put(owner: NodeFileOwner, name: string, bytes: Uint8Array, contentType: string): Promise<FileReference>;
}

/** The run a node output file belongs to: only its organization may read or download it. */
export interface NodeFileOwner {
  organizationId: string;
  executionId: string;
  nodeId: string;
}

export const nodeFileOwner = (context: NodeRunContext): NodeFileOwner => ({
  organizationId: context.organizationId,
  executionId: context.executionId,
  nodeId: context.node.id,
});

export interface IntegrationNodeOptions {
  blobs?: BlobSink;
  /** The outbound guard to connect through; without one, the default guard for `blockPrivate`. */
  guard?: OutboundGuard;
  /** WEFT_OUTBOUND_BLOCK_PRIVATE: refuse loopback, private and link-local targets. */
  blockPrivate?: boolean;
  /** WEFT_HTTP_RESPONSE_MAX_BYTES: largest response body read. */
  responseMaxBytes?: number;
  /** First backoff step; doubled per retry. */
  backoffMs?: number;
  /** Where email attachments are read from; data: urls only without one. */
  files?: NodeFileSource;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_RESPONSE_MAX_BYTES = 10 * 1024 * 1024;

const asText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);

export function authHeaders(connection: DecryptedConnection): Record<string, string> {
  const data = connection.data;
  const auth = asText(data.authType ?? data.type ?? (data.token ? 'bearer' : data.username ? 'basic' : 'headers'));
  switch (auth) {
    case 'bearer':
      return { authorization: `Bearer ${asText(data.token)}` };
    case 'basic':
      return {
        authorization: `Basic ${Buffer.from(`${asText(data.username)}:${asText(data.password)}`).toString('base64')}`,
      };
    case 'apiKey':
    case 'header':
      return { [asText(data.headerName ?? 'x-api-key').toLowerCase()]: asText(data.apiKey ?? data.value) };
    default: {
      const headers = (data.headers ?? {}) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), asText(v)]));
    }
  }
}

function buildBody(config: HttpIntegrationConfig, headers: Record<string, string>): string | undefined {
  if (config.body === undefined || config.body === null || config.method === 'GET' || config.method === 'HEAD') {
    return undefined;
  }
  switch (config.bodyType ?? 'json') {
    case 'json':
      headers['content-type'] ??= 'application/json';
      return JSON.stringify(config.body);
    case 'form': {
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
      const entries = Object.entries((config.body ?? {}) as Record<string, unknown>).map(([k, v]): [string, string] => [
        k,
        asText(v),
      ]);
      return new URLSearchParams(entries).toString();
    }
    case 'text':
      headers['content-type'] ??= 'text/plain; charset=utf-8';
      return asText(config.body);
  }
}

const utf8 = new TextDecoder();

const retryable = (status: number): boolean => status === 429 || status >= 500;

const delay = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });

const retryAfterMs = (header: string | null): number | undefined => {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(seconds * 1000, 60_000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), 60_000);
};

export const integrationNodeExecutor = (options: IntegrationNodeOptions = {}): NodeExecutor<IntegrationNodeConfig> => ({
  type: 'integrationNode',
  async execute(integration, _input, context) {
    if (integration.kind === 'email') {
      const guard = options.guard ?? new OutboundGuard({ blockPrivate: options.blockPrivate === true });
      return {
        output: await sendEmail(integration, context, { guard, files: options.files ?? nodeFileSource(undefined) }),
      };
    }
    const connection = integration.connectionId ? await context.connection(integration.connectionId) : undefined;
    // Only an http connection's credentials go into headers (an smtp one's would leak as Basic auth).
    if (connection && connection.type !== 'http') {
      throw new NodeFailure(`connection ${connection.id} is not an http connection`);
    }
    const webhook =
      integration.kind === 'webhook'
        ? webhookDelivery(integration, webhookSecret(integration, connection), context)
        : undefined;
    // A webhook is a POST whose body is already serialized (the signature covers those bytes).
    const config: HttpIntegrationConfig =
      integration.kind === 'webhook' ? { ...integration, kind: 'http', method: 'POST', body: undefined } : integration;
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      // Quoted without what a user:password@ part would hold.
      throw new NodeFailure(`invalid URL "${config.url.replace(/\/\/[^/@]*@/, '//')}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new NodeFailure(`unsupported URL scheme ${url.protocol}`);
    // fetch refuses them with an error that quotes the whole URL, password included.
    if (url.username !== '' || url.password !== '')
      throw new NodeFailure('the URL carries credentials: give them through an http connection instead');
    for (const [key, value] of Object.entries(config.query ?? {})) {
      for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(key, asText(item));
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(config.headers ?? {})) headers[key.toLowerCase()] = asText(value);
    const credentials = connection ? authHeaders(connection) : {};
    Object.assign(headers, credentials);
    const body = webhook ? webhook.body : buildBody(config, headers);
    const method = config.method ?? (body === undefined ? 'GET' : 'POST');
    const retries = config.retries ?? 2;
    const backoff = options.backoffMs ?? 200;
    const maxBytes = options.responseMaxBytes ?? DEFAULT_RESPONSE_MAX_BYTES;

    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await guardedFetch(
          url,
          {
            method,
            headers: webhook ? { ...headers, ...signedWebhookHeaders(webhook, context.now()) } : headers,
            body,
            redirect: 'follow',
            signal: AbortSignal.any([context.signal, AbortSignal.timeout(config.timeoutMs ?? DEFAULT_TIMEOUT_MS)]),
          },
          options.guard ?? options.blockPrivate === true,
          { credentialHeaders: Object.keys(credentials) },
        );
      } catch (error) {
        if (context.signal.aborted) throw error;
        if (error instanceof OutboundBlockedError) throw new NodeFailure(error.message);
        const reason =
          (error as { name?: string }).name === 'TimeoutError'
            ? `timed out after ${config.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`
            : String((error as Error).cause ?? error);
        if (attempt < retries) {
          await delay(backoff * 2 ** attempt, context.signal);
          continue;
        }
        throw new NodeFailure(`${method} ${url.origin}${url.pathname} failed: ${reason}`);
      }
      if (retryable(response.status) && attempt < retries) {
        await response.body?.cancel();
        await delay(retryAfterMs(response.headers.get('retry-after')) ?? backoff * 2 ** attempt, context.signal);
        continue;
      }
      const responseHeaders = Object.fromEntries(response.headers.entries());
      let parsed: unknown;
      try {
        parsed = await readBody(response, url, maxBytes, options.blobs, nodeFileOwner(context));
      } catch (error) {
        if (error instanceof ResponseTooLargeError) {
          throw new NodeFailure(`${method} ${url.origin}${url.pathname} failed: ${error.message}`);
        }
        throw error;
      }
      if (response.status >= 400) {
        throw new NodeFailure(
          `${method} ${url.origin}${url.pathname} answered ${response.status}: ${asText(parsed).slice(0, 500)}`,
        );
      }
      return { output: { status: response.status, headers: responseHeaders, body: parsed } };
    }
  },
});

async function readBody(
  response: Response,
  url: URL,
  maxBytes: number,
  blobs: BlobSink | undefined,
  owner: NodeFileOwner,
): Promise<unknown> {
  const type = response.headers.get('content-type') ?? '';
  const bytes = await readCappedBody(response, maxBytes);
  if (type.includes('json')) {
    const text = utf8.decode(bytes);
    try {
      return text.length === 0 ? null : JSON.parse(text);
    } catch {
      return text;
    }
  }
  if (type === '' || type.startsWith('text/') || type.includes('xml') || type.includes('x-www-form-urlencoded')) {
    return utf8.decode(bytes);
  }
  const name = decodeURIComponent(url.pathname.split('/').pop() || 'response');
  if (blobs) return { files: [await blobs.put(owner, name, bytes, type)] };
  return {
    files: [
      {
        name,
        size: bytes.byteLength,
        contentType: type,
        url: `data:${type};base64,${Buffer.from(bytes).toString('base64')}`,
      },
    ],
  };
}
