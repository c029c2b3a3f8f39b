import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch, Headers, type RequestInit, type Response } from 'undici';
import { isMetadataAddress, isNonPublicAddress } from './outbound-addresses.js';
import { systemResolver, type ProtectedEndpoint, type ResolvedAddress, type Resolver } from './protected-endpoint.js';

/**
 * SSRF guard for everything the engine connects to on a tenant's behalf (HTTP, SQL): resolves the
 * target once, refuses cloud metadata addresses and protected endpoints (the service's own
 * database) always and non-public addresses with WEFT_OUTBOUND_BLOCK_PRIVATE, and connects to the
 * addresses it checked, so a DNS answer that changes between check and connect is never used.
 */
export class OutboundBlockedError extends Error {
  override name = 'OutboundBlockedError';
}

export interface OutboundPolicy {
  /** WEFT_OUTBOUND_BLOCK_PRIVATE: refuse loopback, private, link-local and reserved targets. */
  blockPrivate: boolean;
  /** Endpoints refused whatever blockPrivate says. */
  protectedEndpoints?: ProtectedEndpoint[];
  /** DNS resolution; the system resolver unless a test injects one. */
  resolve?: Resolver;
}

export interface GuardedFetchOptions {
  /** Headers carrying the caller's credentials, dropped with Authorization and Cookie when a redirect leaves the origin. */
  credentialHeaders?: readonly string[];
}

const MAX_REDIRECTS = 5;
const ALWAYS_CREDENTIALS = ['authorization', 'proxy-authorization', 'cookie'];

export class OutboundGuard {
  private readonly resolve: Resolver;
  private dispatcher: Agent | undefined;

  constructor(private readonly policy: OutboundPolicy) {
    this.resolve = policy.resolve ?? systemResolver;
  }

  /** Resolves `hostname` once and returns its addresses if every one of them may be reached on `port`. */
  async resolveTarget(hostname: string, port: number): Promise<ResolvedAddress[]> {
    const host = hostname.replace(/^\[|\]$/g, '');
    const family = isIP(host);
    const target = `${family === 6 ? `[${host}]` : host}:${port}`;
    const named = this.policy.protectedEndpoints?.find((endpoint) => endpoint.isNamed(host, port));
    if (named) throw new OutboundBlockedError(`connection to ${target} is blocked: ${named.label}`);
    // A failed lookup is a network error like any other (callers may retry it), not a refusal.
    const addresses =
      family === 0 ? await this.resolve(host) : [{ address: host, family: family === 6 ? 6 : 4 } as const];
    if (addresses.length === 0) throw new Error(`${host} has no address`);
    for (const { address } of addresses) {
      if (isMetadataAddress(address)) {
        throw new OutboundBlockedError(`connection to ${target} (${address}) is blocked: cloud metadata address`);
      }
      if (this.policy.blockPrivate && isNonPublicAddress(address)) {
        throw new OutboundBlockedError(`connection to ${target} (${address}) is blocked: not a public address`);
      }
    }
    const plain = addresses.map((entry) => entry.address);
    for (const endpoint of this.policy.protectedEndpoints ?? []) {
      if (await endpoint.covers(port, plain, this.resolve)) {
        throw new OutboundBlockedError(`connection to ${target} is blocked: ${endpoint.label}`);
      }
    }
    return addresses;
  }

  /**
   * fetch through a dispatcher that connects only to checked addresses, following redirects itself
   * so that credentials never travel to another origin.
   */
  async fetch(url: URL, init: RequestInit, options: GuardedFetchOptions = {}): Promise<Response> {
    const dropOnCrossOrigin = new Set([...ALWAYS_CREDENTIALS, ...(options.credentialHeaders ?? [])]);
    let target = url;
    let request: RequestInit = { ...init, headers: lowerCased(init.headers), redirect: 'manual' };
    for (let hop = 0; ; hop++) {
      const response = await this.send(target, request);
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return response;
      await response.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw new OutboundBlockedError(`more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, target);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') {
        throw new OutboundBlockedError(`redirect to unsupported scheme ${next.protocol}`);
      }
      const headers = { ...(request.headers as Record<string, string>) };
      if (next.origin !== target.origin) for (const name of dropOnCrossOrigin) delete headers[name.toLowerCase()];
      request = { ...request, headers };
      // 303 (and 301/302 after POST, as browsers do) continue as GET without a body.
      if (
        response.status === 303 ||
        ((response.status === 301 || response.status === 302) && request.method !== 'GET')
      ) {
        delete headers['content-type'];
        request = { ...request, method: 'GET', body: undefined };
      }
      target = next;
    }
  }

  async close(): Promise<void> {
    await this.dispatcher?.close();
    this.dispatcher = undefined;
  }

  private async send(target: URL, request: RequestInit): Promise<Response> {
    try {
      return await fetch(target, { ...request, dispatcher: this.pinnedDispatcher() });
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      throw cause instanceof OutboundBlockedError ? cause : error;
    }
  }

  /** An undici Agent whose every new socket goes to an address resolveTarget just approved. */
  private pinnedDispatcher(): Agent {
    this.dispatcher ??= new Agent({
      connect: (options, callback) => {
        const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
        this.resolveTarget(options.hostname, port).then(
          // The socket's lookup answers with the checked addresses only (all of them, for happy
          // eyeballs); TLS still names and verifies the host the URL asked for.
          (addresses) => buildConnector({ lookup: answerWith(addresses) })(options, callback),
          (error: Error) => callback(error, null),
        );
      },
    });
    return this.dispatcher;
  }
}

/** A net.connect lookup that never resolves again: it answers with addresses already checked. */
const answerWith =
  (addresses: ResolvedAddress[]): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) return void callback(null, addresses);
    const [first] = addresses as [ResolvedAddress];
    callback(null, first.address, first.family);
  };

const lowerCased = (headers: RequestInit['headers']): Record<string, string> => {
  const result: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => (result[name] = value));
  return result;
};

const defaultGuards = new Map<boolean, OutboundGuard>();

/** fetch through the guard of `policy` (a boolean means "this blockPrivate, no protected endpoint"). */
export async function guardedFetch(
  url: URL,
  init: RequestInit,
  policy: boolean | OutboundGuard,
  options?: GuardedFetchOptions,
): Promise<Response> {
  let guard = typeof policy === 'boolean' ? defaultGuards.get(policy) : policy;
  if (!guard) {
    guard = new OutboundGuard({ blockPrivate: policy as boolean });
    defaultGuards.set(policy as boolean, guard);
  }
  return guard.fetch(url, init, options);
}
