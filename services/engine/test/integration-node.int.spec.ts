import type { DecryptedConnection } from '@weft/contracts';
import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

describe('integration node against a local HTTP server', () => {
  let server: LocalHttpServer;
  let failuresLeft = 0;
  beforeAll(async () => {
    server = await startLocalHttpServer((request, res) => {
      if (request.url.startsWith('/flaky') && failuresLeft-- > 0)
        return json(res, failuresLeft % 2 ? 503 : 429, { error: 'busy' });
      if (request.url.startsWith('/missing')) return json(res, 404, { error: 'nope' });
      if (request.url.startsWith('/file')) {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        return res.end(Buffer.from('%PDF-1.4'));
      }
      return json(
        res,
        200,
        { echo: { method: request.method, url: request.url, body: request.body } },
        { 'x-served': 'yes' },
      );
    });
  });
  afterAll(() => server.close());

  const executors = pureExecutors(integrationNodeExecutor({ backoffMs: 5 }));
  const connection: DecryptedConnection = {
    id: 'conn-1',
    organizationId: 'org',
    type: 'http',
    name: 'api',
    data: { authType: 'bearer', token: 's3cret' },
  };

  const runCall = async (config: Record<string, unknown>, data: unknown = {}) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Call', 'integrationNode', config)
      .edge('In', 'Call');
    return runInMemory(g.snapshot(), g.id('In'), data, { executors, connections: { 'conn-1': connection } });
  };

  test('sends method, templated URL, query, headers, JSON body and connection auth; returns status, headers, body', async () => {
    const { outcome, listener } = await runCall(
      {
        method: 'POST',
        url: `${server.url}/orders/{{input["In"]["id"]}}`,
        query: { verbose: 'true', tag: ['a', 'b'] },
        headers: { 'X-Trace': '{{input["In"]["trace"]}}' },
        body: { amount: '{{input["In"]["amount"]}}' },
        connectionId: 'conn-1',
      },
      { id: 42, trace: 't-1', amount: 9.5 },
    );
    expect(outcome.status).toBe('completed');
    const output = listener.output('Call') as {
      status: number;
      headers: Record<string, string>;
      body: { echo: Record<string, string> };
    };
    expect(output.status).toBe(200);
    expect(output.headers['x-served']).toBe('yes');
    expect(output.body.echo).toEqual({
      method: 'POST',
      url: '/orders/42?verbose=true&tag=a&tag=b',
      body: '{"amount":9.5}',
    });
    const received = server.requests.at(-1)!;
    expect(received.headers.authorization).toBe('Bearer s3cret');
    expect(received.headers['x-trace']).toBe('t-1');
    expect(received.headers['content-type']).toBe('application/json');
  });

  test('form and text bodies', async () => {
    await runCall({ method: 'POST', url: `${server.url}/form`, bodyType: 'form', body: { a: 1, b: 'x y' } });
    expect(server.requests.at(-1)).toMatchObject({
      body: 'a=1&b=x+y',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await runCall({ method: 'PUT', url: `${server.url}/text`, bodyType: 'text', body: 'plain words' });
    expect(server.requests.at(-1)).toMatchObject({ method: 'PUT', body: 'plain words' });
  });

  test('retries 5xx and 429 with backoff, then succeeds', async () => {
    failuresLeft = 2;
    const before = server.requests.length;
    const { outcome, listener } = await runCall({ url: `${server.url}/flaky`, retries: 3 });
    expect(outcome.status).toBe('completed');
    expect(server.requests.length - before).toBe(3);
    expect((listener.output('Call') as { status: number }).status).toBe(200);
  });

  test('gives up after its retries and fails the node with the status', async () => {
    failuresLeft = 10;
    const { outcome } = await runCall({ url: `${server.url}/flaky`, retries: 1 });
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringMatching(/answered (503|429)/) });
    failuresLeft = 0;
  });

  test('a 4xx answer fails the node without retrying', async () => {
    const before = server.requests.length;
    const { outcome } = await runCall({ url: `${server.url}/missing`, retries: 3 });
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('answered 404') });
    expect(server.requests.length - before).toBe(1);
  });

  test('a URL with credentials, templated from data, fails the node without quoting them', async () => {
    const before = server.requests.length;
    const withCredentials = await runCall(
      { url: '{{input["In"]["target"]}}' },
      { target: `${server.url.replace('//', '//user:PASSWORD-XYZ@')}/x` },
    );
    expect(withCredentials.outcome).toMatchObject({
      status: 'failed',
      error: 'the URL carries credentials: give them through an http connection instead',
    });
    const unparsable = await runCall(
      { url: '{{input["In"]["target"]}}' },
      { target: 'http://user:PASSWORD-XYZ@[::1/x' },
    );
    expect(unparsable.outcome).toMatchObject({ status: 'failed', error: 'invalid URL "http://[::1/x"' });
    expect(server.requests.length).toBe(before);
  });

  test('binary responses come back as file references', async () => {
    const { listener } = await runCall({ url: `${server.url}/file/report.pdf` });
    const output = listener.output('Call') as {
      body: { files: { name: string; size: number; contentType: string }[] };
    };
    expect(output.body.files[0]).toMatchObject({ name: 'report.pdf', size: 8, contentType: 'application/pdf' });
  });

  test('a timeout fails the node', async () => {
    const slow = await startLocalHttpServer(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 500));
      json(res, 200, {});
    });
    try {
      const { outcome } = await runCall({ url: `${slow.url}/slow`, timeoutMs: 50, retries: 0 });
      expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('timed out') });
    } finally {
      await slow.close();
    }
  });

  test('with WEFT_OUTBOUND_BLOCK_PRIVATE a loopback target fails the node and sends nothing', async () => {
    const before = server.requests.length;
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Call', 'integrationNode', { url: `${server.url}/internal`, retries: 0 })
      .edge('In', 'Call');
    const guarded = pureExecutors(integrationNodeExecutor({ backoffMs: 5, blockPrivate: true }));
    const { outcome } = await runInMemory(g.snapshot(), g.id('In'), {}, { executors: guarded });
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('is blocked') });
    expect(server.requests.length).toBe(before);
  });
});
