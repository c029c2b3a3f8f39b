import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createServer, type Server } from 'node:http';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';
import { ProtectedEndpoint, type Resolver } from '../src/adapters/http/protected-endpoint.js';
import { BrowserHost } from '../src/adapters/nodes/browser-host.js';
import { webAutomationNodeExecutor } from '../src/adapters/nodes/web-automation-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

const CHROMIUM = process.env.WEFT_CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('web automation node (playwright-core driving the system Chromium, pages on loopback)', () => {
  let site: LocalHttpServer;
  let other: LocalHttpServer;
  // What an allowed page redirects the browser to; it must never be reached.
  let forbidden: LocalHttpServer;
  // Accepts websockets and greets each with one text frame; counts the handshakes it saw.
  let sockets: Server;
  const handshakes: string[] = [];
  const upgraded = new Set<Duplex>();
  // One browser for the whole file, as the engine keeps one.
  const browsers = new BrowserHost({ executablePath: CHROMIUM, maxContexts: 2 });

  beforeAll(async () => {
    sockets = createServer();
    sockets.on('upgrade', (request, socket) => {
      handshakes.push(request.headers.host ?? '');
      upgraded.add(socket);
      const accept = createHash('sha1')
        .update(`${request.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest('base64');
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      );
      socket.write(Buffer.concat([Buffer.from([0x81, 5]), Buffer.from('hello')]));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => sockets.listen(0, '127.0.0.1', resolve));
    forbidden = await startLocalHttpServer((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<h1 id="secret">metadata</h1>');
    });
    other = await startLocalHttpServer((_request, res) => {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end();
    });
    site = await startLocalHttpServer((request, res) => {
      if (request.url.startsWith('/redirect?to=')) {
        res.writeHead(302, { location: decodeURIComponent(request.url.slice('/redirect?to='.length)) });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      if (request.url.startsWith('/done')) {
        const query = new URL(request.url, 'http://x').searchParams;
        return res.end(`<h1 id="result">Hello ${query.get('name')} (${query.get('size')})</h1>`);
      }
      if (request.url.startsWith('/socket?to=')) {
        const target = decodeURIComponent(request.url.slice('/socket?to='.length));
        return res.end(`<p id="ws">waiting</p><script>
          const ws = new WebSocket(${JSON.stringify(target)});
          ws.onmessage = (event) => (document.getElementById('ws').textContent = event.data);
          ws.onerror = () => (document.getElementById('ws').textContent = 'refused');
        </script>`);
      }
      if (request.url.startsWith('/tracker')) {
        // An image from another host: only allowedHosts may be reached.
        return res.end(`<img src="http://localhost:${new URL(other.url).port}/pixel.png"><p id="t">tracked</p>`);
      }
      res.end(`<form action="/done">
        <input id="name" name="name"><select id="size" name="size"><option>S</option><option>L</option></select>
        <a id="help" href="/help?x=1">help</a><button id="go" type="submit">Go</button></form>`);
    });
  });
  afterAll(async () => {
    await browsers.close();
    await site.close();
    await other.close();
    await forbidden.close();
    for (const socket of upgraded) socket.destroy();
    await new Promise((resolve) => sockets.close(resolve));
  });

  const run = async (
    config: Record<string, unknown>,
    options: { host?: BrowserHost; blockPrivate?: boolean; signal?: AbortSignal; guard?: OutboundGuard } = {},
  ) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Browse', 'webAutomationNode', config)
      .edge('In', 'Browse');
    const executor = webAutomationNodeExecutor({
      browsers: options.host ?? browsers,
      guard: options.guard ?? new OutboundGuard({ blockPrivate: options.blockPrivate === true }),
      stepTimeoutMs: 10_000,
    });
    return runInMemory(
      g.snapshot(),
      g.id('In'),
      { who: 'Ada' },
      { executors: pureExecutors(executor), signal: options.signal },
    );
  };

  test('fills a form, submits it, extracts text and attributes, screenshots and prints to PDF', async () => {
    const { outcome, listener } = await run({
      allowedHosts: ['127.0.0.1'],
      steps: [
        { action: 'goto', url: `${site.url}/form` },
        { action: 'extractAttribute', selector: '#help', attribute: 'href', name: 'help' },
        { action: 'fill', selector: '#name', value: '{{input["In"]["who"]}}' },
        { action: 'select', selector: '#size', value: 'L' },
        { action: 'click', selector: '#go' },
        { action: 'waitFor', selector: '#result' },
        { action: 'extractText', selector: '#result', name: 'greeting' },
        { action: 'screenshot', name: 'result.png' },
        { action: 'pdf', name: 'result.pdf' },
      ],
    });
    expect(outcome.status).toBe('completed');
    const output = listener.output('Browse') as {
      extracted: Record<string, string>;
      files: { name: string; contentType: string; size: number; url: string }[];
    };
    expect(output.extracted).toEqual({ help: '/help?x=1', greeting: 'Hello Ada (L)' });
    expect(output.files.map((file) => [file.name, file.contentType])).toEqual([
      ['result.png', 'image/png'],
      ['result.pdf', 'application/pdf'],
    ]);
    const png = Buffer.from(output.files[0]!.url.split(',')[1]!, 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const pdf = Buffer.from(output.files[1]!.url.split(',')[1]!, 'base64');
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });

  test('requests to hosts outside allowedHosts are aborted, the page still loads', async () => {
    const before = other.requests.length;
    const { outcome, listener } = await run({
      allowedHosts: ['127.0.0.1'],
      steps: [
        { action: 'goto', url: `${site.url}/tracker` },
        { action: 'extractText', selector: '#t', name: 't' },
      ],
    });
    expect(outcome.status).toBe('completed');
    expect((listener.output('Browse') as { extracted: unknown }).extracted).toEqual({ t: 'tracked' });
    expect(other.requests.length).toBe(before);
  });

  test('navigating to a host outside allowedHosts fails the step and names the reason', async () => {
    const { outcome } = await run({
      allowedHosts: ['example.test'],
      steps: [{ action: 'goto', url: `${site.url}/form` }],
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^step 1 \(goto .*\) failed: .*host 127\.0\.0\.1 is not in allowedHosts/),
    });
  });

  const forbiddenPort = () => new URL(forbidden.url).port;
  const redirectTo = (target: string) => `${site.url}/redirect?to=${encodeURIComponent(target)}`;

  test('a redirect from an allowed page to a host outside allowedHosts is refused; the target is never reached', async () => {
    const { outcome } = await run({
      allowedHosts: ['127.0.0.1'],
      steps: [{ action: 'goto', url: redirectTo(`http://localhost:${forbiddenPort()}/latest/meta-data`) }],
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^step 1 \(goto .*\) failed: .*host localhost is not in allowedHosts/),
    });
    expect(forbidden.requests).toHaveLength(0);
  });

  test('a redirect to an address the outbound guard refuses is refused, though its host is allowed', async () => {
    // The guard protects the forbidden server's address and port, as it protects the service's database.
    const guard = new OutboundGuard({
      blockPrivate: false,
      protectedEndpoints: [ProtectedEndpoint.ofDatabaseUrl(`postgres://127.0.0.1:${forbiddenPort()}/weft`)],
    });
    try {
      const { outcome } = await run(
        { allowedHosts: ['127.0.0.1'], steps: [{ action: 'goto', url: redirectTo(`${forbidden.url}/secret`) }] },
        { guard },
      );
      expect(outcome).toMatchObject({
        status: 'failed',
        error: expect.stringContaining(
          `connection to 127.0.0.1:${forbiddenPort()} is blocked: the service's own database`,
        ),
      });
      expect(forbidden.requests).toHaveLength(0);
    } finally {
      await guard.close();
    }
  });

  test('websockets go through the same checks: an allowed host answers, another is never reached', async () => {
    const port = (sockets.address() as AddressInfo).port;
    const open = (target: string) =>
      run({
        allowedHosts: ['127.0.0.1'],
        steps: [
          { action: 'goto', url: `${site.url}/socket?to=${encodeURIComponent(target)}` },
          { action: 'waitFor', selector: '#ws:not(:text("waiting"))' },
          { action: 'extractText', selector: '#ws', name: 'ws' },
        ],
      });
    const allowed = await open(`ws://127.0.0.1:${port}/feed`);
    expect(allowed.outcome.status).toBe('completed');
    expect((allowed.listener.output('Browse') as { extracted: unknown }).extracted).toEqual({ ws: 'hello' });
    expect(handshakes).toEqual([`127.0.0.1:${port}`]);
    const refused = await open(`ws://localhost:${port}/feed`);
    expect(refused.outcome.status).toBe('completed');
    expect((refused.listener.output('Browse') as { extracted: unknown }).extracted).toEqual({ ws: 'refused' });
    expect(handshakes).toHaveLength(1);
  });

  test('goto opens http and https pages only', async () => {
    const { outcome } = await run({ steps: [{ action: 'goto', url: 'file:///etc/hostname' }] });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'step 1 (goto file:///etc/hostname) failed: scheme file: is not allowed (http and https only)',
    });
  });

  test('host names are resolved by the outbound guard, and the browser connects to the address it checked', async () => {
    // Chromium cannot resolve this name itself; only the guard's resolver knows it.
    const resolve: Resolver = async (name) => {
      if (name === 'shop.weft.test') return [{ address: '127.0.0.1', family: 4 }];
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    };
    const guard = new OutboundGuard({ blockPrivate: false, resolve });
    try {
      const { outcome, listener } = await run(
        {
          allowedHosts: ['shop.weft.test'],
          steps: [
            { action: 'goto', url: `http://shop.weft.test:${new URL(site.url).port}/tracker` },
            { action: 'extractText', selector: '#t', name: 't' },
          ],
        },
        { guard },
      );
      expect(outcome.status).toBe('completed');
      expect((listener.output('Browse') as { extracted: unknown }).extracted).toEqual({ t: 'tracked' });
    } finally {
      await guard.close();
    }
  });

  test('the outbound guard refuses private addresses with WEFT_OUTBOUND_BLOCK_PRIVATE', async () => {
    const { outcome } = await run({ steps: [{ action: 'goto', url: `${site.url}/form` }] }, { blockPrivate: true });
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('not a public address') });
  });

  test('a step that waits too long fails with its timeout', async () => {
    const { outcome } = await run({
      steps: [
        { action: 'goto', url: `${site.url}/form` },
        { action: 'waitFor', selector: '#never', timeoutMs: 200 },
      ],
    });
    expect(outcome).toMatchObject({ status: 'failed', error: 'step 2 (waitFor #never) timed out after 200 ms' });
  });

  test('cancelling the execution ends the step in progress', async () => {
    const controller = new AbortController();
    const running = run(
      {
        steps: [
          { action: 'goto', url: `${site.url}/form` },
          { action: 'waitFor', selector: '#never', timeoutMs: 120_000 },
        ],
      },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('cancelled by test')), 1500);
    const { outcome } = await running;
    expect(outcome.status).not.toBe('completed');
  });

  test('a missing Chromium fails with what to install', async () => {
    const missing = new BrowserHost({ executablePath: '/nonexistent/chromium', maxContexts: 1 });
    const { outcome } = await run({ steps: [{ action: 'goto', url: `${site.url}/form` }] }, { host: missing });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: expect.stringContaining('install it (apt-get install chromium) or set WEFT_CHROMIUM_PATH'),
    });
  });
});
