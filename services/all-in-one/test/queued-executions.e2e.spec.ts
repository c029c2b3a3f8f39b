import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

/**
 * An execution accepted while every engine slot is busy (docs/engine.md "Accepted before queued"):
 * its id reads as `running` with `queued: true` at once, another organization sees nothing, and a
 * cancel holds when an engine later takes the request: no node runs. One slot per engine, held by
 * runs whose HTTP call hangs until the test lets it go.
 */
describe(`queued executions (${deploymentKind()})`, () => {
  const ENGINES = 2;
  let under: Deployment;
  let sideEffects: Server;
  let hits = 0;
  const hanging: ServerResponse[] = [];
  let hangingSeen = 0;
  let baseUrl: string;

  beforeAll(async () => {
    sideEffects = createServer((request: IncomingMessage, response: ServerResponse) => {
      if (request.url?.startsWith('/hang')) {
        hangingSeen += 1;
        hanging.push(response);
        return;
      }
      hits += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => sideEffects.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(sideEffects.address() as AddressInfo).port}`;
    under = await startDeployment({ env: { WEFT_ENGINE_MAX_RUNNING_EXECUTIONS: '1' }, engines: ENGINES });
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    for (const response of hanging.splice(0)) response.end();
    await under?.stop();
    await new Promise((resolve) => sideEffects?.close(resolve));
  });

  const organization = async (name: string) => {
    const org = await under.call('POST', '/api/v1/organizations', { name });
    const key = await under.call('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: 'k',
      userName: 'Ann',
      userId: randomUUID(),
    });
    expect(key.status).toBe(201);
    return { id: org.body.id as string, call: client(under.baseUrl, key.body.key as string) };
  };
  const callingProcess = async (org: Awaited<ReturnType<typeof organization>>, path: string) => {
    const created = await org.call('POST', `/api/v1/processes/by-org/${org.id}`, {
      name: `calls ${path}`,
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
        // No retry and the longest timeout: a hanging call holds its slot and is seen once.
        {
          id: 'call',
          type: 'integrationNode',
          config: { label: 'Call', method: 'GET', url: `${baseUrl}${path}`, retries: 0, timeoutMs: 300_000 },
        },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'call' },
        { source_node_id: 'call', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const until = async (done: () => boolean | Promise<boolean>, what: string) => {
    for (let tries = 0; tries < 1200; tries += 1) {
      if (await done()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`never: ${what}`);
  };

  test('a queued execution is readable and cancellable at once, and the cancel holds at pick-up', async () => {
    const acme = await organization('Queued');
    const globex = await organization('Other');
    const hang = await callingProcess(acme, '/hang');
    const hit = await callingProcess(acme, '/hit');
    // Every slot (one per engine) runs a call that hangs.
    const slots = under.kind === 'embedded' ? 1 : ENGINES;
    const holders: string[] = [];
    for (let i = 0; i < slots; i += 1) {
      const held = await acme.call('POST', `/api/v1/processes/test/${hang}?waitSeconds=0`, {});
      expect(held.status).toBe(202);
      holders.push(held.body.execution_id as string);
      await until(() => hangingSeen === i + 1, `slot ${i + 1} held`);
    }

    const accepted = await acme.call('POST', `/api/v1/processes/test/${hit}?waitSeconds=0`, {});
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'running', queued: true });
    const id = accepted.body.execution_id as string;
    const read = await acme.call('GET', `/api/v1/processes/execution/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, status: 'running', queued: true });
    expect((await globex.call('GET', `/api/v1/processes/execution/${id}`)).status).toBe(404);
    expect((await globex.call('POST', `/api/v1/processes/execution/${id}/cancel`)).status).toBe(404);
    const cancelled = await acme.call('POST', `/api/v1/processes/execution/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');

    // Free the slots: the engines take the queued request, find it cancelled and run nothing.
    for (const response of hanging.splice(0)) response.writeHead(200).end('{}');
    for (const holder of holders)
      await until(
        async () => (await acme.call('GET', `/api/v1/processes/execution/${holder}`)).body.status === 'completed',
        `the slot holder ${holder} completed`,
      );
    // Something queued after the cancelled request runs once the engines are free, so the queue was drained.
    const after = await acme.call('POST', `/api/v1/processes/test/${hit}`, {});
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('completed');
    const final = await acme.call('GET', `/api/v1/processes/execution/${id}`);
    expect(final.body).toMatchObject({ status: 'cancelled' });
    expect(final.body.node_states ?? []).toEqual([]);
    expect(hits).toBe(1);
  }, 240_000);
});
