import type { DecryptedConnection } from '@weft/contracts';
import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

/** Two loopback servers on different ports are two origins: a redirect between them must not carry credentials. */
describe('integration node redirects and credentials', () => {
  let other: LocalHttpServer;
  let origin: LocalHttpServer;
  beforeAll(async () => {
    other = await startLocalHttpServer((_req, res) => json(res, 200, { at: 'other' }));
    origin = await startLocalHttpServer((request, res) => {
      if (request.url === '/cross') {
        res.writeHead(302, { location: `${other.url}/landing` });
        return res.end();
      }
      if (request.url === '/same') {
        res.writeHead(307, { location: '/landing' });
        return res.end();
      }
      return json(res, 200, { at: 'origin' });
    });
  });
  afterAll(async () => {
    await origin.close();
    await other.close();
  });

  const connections: Record<string, DecryptedConnection> = {
    bearer: {
      id: 'bearer',
      organizationId: 'org',
      type: 'http',
      name: 'b',
      data: { authType: 'bearer', token: 's3cret' },
    },
    apiKey: {
      id: 'apiKey',
      organizationId: 'org',
      type: 'http',
      name: 'k',
      data: { authType: 'apiKey', headerName: 'X-Api-Key', apiKey: 'k3y' },
    },
  };
  const run = (path: string, connectionId: string) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Call', 'integrationNode', {
        url: `${origin.url}${path}`,
        connectionId,
        headers: { Cookie: 'session=abc', 'X-Trace': 't-1' },
        retries: 0,
      })
      .edge('In', 'Call');
    return runInMemory(
      g.snapshot(),
      g.id('In'),
      {},
      {
        executors: pureExecutors(integrationNodeExecutor({})),
        connections,
      },
    );
  };

  test.each(['bearer', 'apiKey'])(
    'a cross-origin redirect drops Authorization, Cookie and the %s connection header, keeps the rest',
    async (connectionId) => {
      const { outcome, listener } = await run('/cross', connectionId);
      expect(outcome.status).toBe('completed');
      expect(listener.output('Call')).toMatchObject({ body: { at: 'other' } });
      const first = origin.requests.at(-1)!;
      expect(first.headers.cookie).toBe('session=abc');
      expect(first.headers.authorization ?? first.headers['x-api-key']).toBeDefined();
      const landed = other.requests.at(-1)!;
      expect(landed.url).toBe('/landing');
      expect(landed.headers['x-trace']).toBe('t-1');
      expect(landed.headers.authorization).toBeUndefined();
      expect(landed.headers['x-api-key']).toBeUndefined();
      expect(landed.headers.cookie).toBeUndefined();
    },
  );

  test('a same-origin redirect keeps the credentials', async () => {
    const { outcome } = await run('/same', 'apiKey');
    expect(outcome.status).toBe('completed');
    const landed = origin.requests.at(-1)!;
    expect(landed.url).toBe('/landing');
    expect(landed.headers['x-api-key']).toBe('k3y');
    expect(landed.headers.cookie).toBe('session=abc');
  });
});
