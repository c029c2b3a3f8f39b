import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

/**
 * WEFT_HTTP_RESPONSE_MAX_BYTES: a 20 MB answer against a 1 MB cap fails the node, and the
 * engine stops reading: the server, which writes only as fast as the socket drains, is never
 * able to push the whole 20 MB.
 */
const TOTAL = 20 * 1024 * 1024;
const CAP = 1024 * 1024;

describe('integration node response cap', () => {
  const pushed: Promise<number>[] = [];
  const server = createServer((req, res) => {
    const declared = req.url === '/declared';
    res.writeHead(200, {
      'content-type':
        req.url === '/text' ? 'text/plain' : req.url === '/json' ? 'application/json' : 'application/octet-stream',
      ...(declared ? { 'content-length': String(TOTAL) } : {}),
    });
    res.flushHeaders();
    pushed.push(streamUntilClosed(res, declared ? 0 : TOTAL));
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const run = (path: string) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Call', 'integrationNode', { url: `${url}${path}`, retries: 0 })
      .edge('In', 'Call');
    return runInMemory(
      g.snapshot(),
      g.id('In'),
      {},
      {
        executors: pureExecutors(integrationNodeExecutor({ responseMaxBytes: CAP })),
      },
    );
  };

  test.each(['/binary', '/text', '/json'])(
    'a 20 MB streamed %s answer fails the node and is not read to the end',
    async (path) => {
      const { outcome } = await run(path);
      expect(outcome).toMatchObject({
        status: 'failed',
        error: expect.stringContaining(`response body is larger than ${CAP} bytes (WEFT_HTTP_RESPONSE_MAX_BYTES)`),
      });
      const sent = await pushed.at(-1)!;
      expect(sent).toBeLessThan(TOTAL);
    },
  );

  test('a Content-Length over the cap fails the node before the body is read', async () => {
    const { outcome } = await run('/declared');
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('WEFT_HTTP_RESPONSE_MAX_BYTES') });
  });
});

/** Writes up to `total` bytes with backpressure; resolves with how many the socket accepted once it closes. */
function streamUntilClosed(res: ServerResponse, total: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  return new Promise((resolve) => {
    let sent = 0;
    res.on('close', () => resolve(sent));
    const pump = (): void => {
      while (sent < total && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed && total > 0) res.end();
    };
    pump();
  });
}
