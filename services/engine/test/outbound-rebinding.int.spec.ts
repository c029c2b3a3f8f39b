import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';
import type { ResolvedAddress } from '../src/adapters/http/protected-endpoint.js';
import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

/**
 * DNS rebinding: a name that answers one address to the check and another to the connection.
 * Tests may only reach loopback, so the checked answer is 127.0.0.2 and the rebound one 127.0.0.3,
 * each with its own server on the same port; the request must land on the checked one.
 */
const listen = (server: Server, host: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });

describe('outbound guard pins the address it checked', () => {
  const hits = { checked: 0, rebound: 0 };
  const checkedServer = createServer((_req, res) => {
    hits.checked++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"served":"checked"}');
  });
  const reboundServer = createServer((_req, res) => {
    hits.rebound++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"served":"rebound"}');
  });
  let port = 0;
  beforeAll(async () => {
    port = await listen(checkedServer, '127.0.0.2', 0);
    await listen(reboundServer, '127.0.0.3', port);
  });
  afterAll(async () => {
    for (const server of [checkedServer, reboundServer]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a name answering 127.0.0.2 to the first lookup and 127.0.0.3 afterwards is connected to 127.0.0.2, resolved once', async () => {
    const lookups: string[] = [];
    const rebinding = async (hostname: string): Promise<ResolvedAddress[]> => {
      lookups.push(hostname);
      return [{ address: lookups.length === 1 ? '127.0.0.2' : '127.0.0.3', family: 4 }];
    };
    const guard = new OutboundGuard({ blockPrivate: false, resolve: rebinding });
    try {
      const g = new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Call', 'integrationNode', { url: `http://rebind.test:${port}/x`, retries: 0 })
        .edge('In', 'Call');
      const { outcome, listener } = await runInMemory(
        g.snapshot(),
        g.id('In'),
        {},
        {
          executors: pureExecutors(integrationNodeExecutor({ guard })),
        },
      );
      expect(outcome.status).toBe('completed');
      expect(listener.output('Call')).toMatchObject({ body: { served: 'checked' } });
      expect(hits).toEqual({ checked: 1, rebound: 0 });
      expect(lookups).toEqual(['rebind.test']);
    } finally {
      await guard.close();
    }
  });

  test('with WEFT_OUTBOUND_BLOCK_PRIVATE a name answering loopback is refused at connect time and nothing is sent', async () => {
    const before = { ...hits };
    const guard = new OutboundGuard({ blockPrivate: true, resolve: async () => [{ address: '127.0.0.2', family: 4 }] });
    try {
      const g = new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Call', 'integrationNode', { url: `http://rebind.test:${port}/x`, retries: 0 })
        .edge('In', 'Call');
      const { outcome } = await runInMemory(
        g.snapshot(),
        g.id('In'),
        {},
        {
          executors: pureExecutors(integrationNodeExecutor({ guard })),
        },
      );
      expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('not a public address') });
      expect(hits).toEqual(before);
    } finally {
      await guard.close();
    }
  });
});
