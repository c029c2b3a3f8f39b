import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { OutboundBlockedError, type OutboundGuard } from '../http/outbound-guard.js';

/**
 * The forward proxy one web automation run's browser context goes through, on loopback. Chromium
 * sends it every connection it opens: plain http requests (redirects included: Chromium follows
 * them itself, without asking any route handler again) and CONNECT tunnels (https, websockets).
 * For each, the proxy checks the host against allowedHosts, resolves it through the outbound guard
 * and connects to the address the guard checked, so neither a redirect nor a DNS answer that
 * changed after the check reaches anything the guard refused. Chromium never resolves a name.
 */
export interface BrowserProxyPolicy {
  /** The node's allowedHosts (empty: every host the guard allows). */
  allowedHosts: readonly string[];
  guard: OutboundGuard;
}

/** Headers of one hop only, never forwarded (RFC 9110 7.6.1, and what proxies add). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'upgrade', 'te']);

export const hostAllowed = (host: string, allowed: readonly string[]): boolean =>
  allowed.length === 0 ||
  allowed.some((entry) => {
    const name = entry.toLowerCase();
    return name.startsWith('*.') ? host.endsWith(name.slice(1)) : host === name;
  });

export class BrowserProxy {
  /** Why the latest request was refused ("<target>: <reason>"); a failing step's error names it. */
  lastRefusal: string | undefined;
  private readonly tunnels = new Set<Duplex>();
  /** Upstream connections of this run only, kept alive between its requests and closed with it. */
  private readonly agent = new Agent({ keepAlive: true });

  private constructor(
    private readonly server: Server,
    private readonly policy: BrowserProxyPolicy,
  ) {}

  static async start(policy: BrowserProxyPolicy): Promise<BrowserProxy> {
    const server = createServer();
    const proxy = new BrowserProxy(server, policy);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void proxy.forward(req, res));
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void proxy.tunnel(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** `http://127.0.0.1:<port>`, for the browser context's proxy setting. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const tunnel of this.tunnels) tunnel.destroy();
    this.agent.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The checked address to connect to for `host:port`, or undefined (and the reason recorded). */
  private async check(target: string, hostname: string, port: number): Promise<string | undefined> {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    let reason: string;
    if (!hostAllowed(host, this.policy.allowedHosts)) {
      reason = `host ${host} is not in allowedHosts`;
    } else {
      try {
        const [first] = await this.policy.guard.resolveTarget(host, port);
        return first!.address;
      } catch (error) {
        reason = error instanceof OutboundBlockedError ? error.message : `${host} cannot be resolved`;
      }
    }
    this.lastRefusal = `${target.slice(0, 200)}: ${reason}`;
    return undefined;
  }

  /** A plain http request in absolute form (`GET http://host/path`). */
  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400).end();
      return;
    }
    const port = Number(url.port) || 80;
    const address = await this.check(url.href, url.hostname, port);
    // A refused request gets no answer at all: a network error for the page, not a page to render.
    if (address === undefined) return void req.socket.destroy();
    const upstream = httpRequest({
      host: address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: endToEnd(req.rawHeaders),
      setHost: false,
      agent: this.agent,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.rawHeaders));
      answer.pipe(res);
    });
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  /** A CONNECT tunnel (`CONNECT host:443`): https and websockets. */
  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.tunnels.add(client);
    client.on('close', () => this.tunnels.delete(client));
    client.on('error', () => client.destroy());
    let target: URL;
    try {
      target = new URL(`http://${req.url ?? ''}`);
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const port = Number(target.port) || 443;
    const address = await this.check(req.url ?? '', target.hostname, port);
    if (address === undefined) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const upstream: Socket = connect({ host: address, port }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    this.tunnels.add(upstream);
    upstream.on('close', () => {
      this.tunnels.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => (client.writable ? client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n') : client.destroy()));
    client.on('close', () => upstream.destroy());
  }
}

/** Raw headers (name, value, name, value, ...) without the hop-by-hop ones. */
function endToEnd(raw: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}
