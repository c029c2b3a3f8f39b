import { randomUUID } from 'node:crypto';
import type { RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client } from './weft-harness.js';
import { startWeftIn, type WeftUnderTest } from './weft-modes.js';

/**
 * Two gateway replicas on one PostgreSQL and NATS (docs/gateway.md): a key revoked on one stops
 * working on the other within 5 s. Only the clock (Date) is faked, so the 5 s pass at once.
 */
describe('a key revoked on one gateway replica', () => {
  let under: WeftUnderTest;
  let second: RunningWeft;
  beforeAll(async () => {
    under = await startWeftIn('distributed');
    second = await under.startReplica();
  }, 60_000);
  afterAll(async () => {
    jest.useRealTimers();
    await under?.dispose();
  });

  test('stops working there at once and on the other replica within 5 s', async () => {
    const system = client(under.weft.url, BOOTSTRAP_KEY);
    const org = await system('POST', '/api/v1/organizations', { name: 'Replicated' });
    const issued = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: 'shared',
      userName: 'Sam',
      userId: randomUUID(),
    });
    expect(issued.status).toBe(201);
    const onFirst = client(under.weft.url, issued.body.key);
    const onSecond = client(second.url, issued.body.key);
    const listPath = `/api/v1/api-keys/by-org/${org.body.id}`;
    // The second replica has now looked the key up (and may keep the answer for its cache's lifetime).
    expect((await onSecond('GET', listPath)).status).toBe(200);

    expect((await system('DELETE', `/api/v1/api-keys/by-id/${issued.body.id}`)).status).toBe(204);
    expect((await onFirst('GET', listPath)).status).toBe(401);

    jest.useFakeTimers({
      advanceTimers: true,
      doNotFake: [
        'hrtime',
        'nextTick',
        'performance',
        'queueMicrotask',
        'setImmediate',
        'clearImmediate',
        'setInterval',
        'clearInterval',
        'setTimeout',
        'clearTimeout',
      ],
    });
    jest.setSystemTime(Date.now() + 5_001);
    const answer = await onSecond('GET', listPath);
    jest.useRealTimers();
    expect(answer.status).toBe(401);
    expect(answer.contentType).toContain('application/problem+json');
  });
});
