import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

/** A 429 or 503 with Retry-After is retried after the time it names, not after the node's own backoff. */
describe('integration node honours Retry-After', () => {
  let server: LocalHttpServer;
  let retryAfter: string;
  let arrivals: number[] = [];
  beforeAll(async () => {
    server = await startLocalHttpServer((_request, res) => {
      arrivals.push(Date.now());
      return arrivals.length === 1
        ? json(res, 429, { error: 'slow down' }, { 'retry-after': retryAfter })
        : json(res, 200, { ok: true });
    });
  });
  afterAll(() => server.close());

  const callOnce = async (backoffMs: number) => {
    arrivals = [];
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Call', 'integrationNode', { url: `${server.url}/busy`, retries: 1 })
      .edge('In', 'Call');
    const executors = pureExecutors(integrationNodeExecutor({ backoffMs }));
    return (await runInMemory(g.snapshot(), g.id('In'), {}, { executors })).outcome.status;
  };

  // The node's own backoff is ten minutes here: only Retry-After can bring the retry within the test's time.
  test.each([
    ['seconds', '0'],
    ['an HTTP date already past', new Date(Date.now() - 60_000).toUTCString()],
  ])('Retry-After as %s retries at once', async (_form, header) => {
    retryAfter = header;
    expect(await callOnce(600_000)).toBe('completed');
    expect(arrivals).toHaveLength(2);
  });

  test('Retry-After: 1 waits at least a second although the backoff is 5 ms', async () => {
    retryAfter = '1';
    expect(await callOnce(5)).toBe('completed');
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(990);
  });
});
