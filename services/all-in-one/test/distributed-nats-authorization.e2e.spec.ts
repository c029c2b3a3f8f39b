import { createServer as createHttpServer, type Server } from 'node:http';
import type { NatsBus } from '@weft/bus';
import type { PublishedEventEnvelope } from '@weft/contracts';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

/**
 * Distributed mode under the NATS users and permissions docker-compose runs (infra/nats/auth.conf):
 * the gateway, the catalog and the engines, each its own built process logged in as its own user
 * (support/deployment.ts), serve a process whose HTTP node authenticates with a stored connection
 * (the engine asks the catalog for the secret), and an outside subscriber reads the execution's
 * events from WEFT_EVENTS. Distributed deployment only: embedded has no NATS.
 */
const TOKEN = 'connection-secret-token';
const describeDistributed = deploymentKind() === 'distributed' ? describe : describe.skip;

describeDistributed('distributed mode with a NATS user per service (infra/nats/auth.conf)', () => {
  let deployment: Deployment;
  let subscriber: NatsBus | undefined;
  let api: Server;
  let apiUrl: string;
  const tokensSeen: Array<string | undefined> = [];

  beforeAll(async () => {
    // The API the process calls: it answers only a caller holding the connection's token.
    api = createHttpServer((request, response) => {
      tokensSeen.push(request.headers.authorization);
      const authorized = request.headers.authorization === `Bearer ${TOKEN}`;
      response.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ authorized }));
    });
    await new Promise<void>((listening) => api.listen(0, '127.0.0.1', listening));
    apiUrl = `http://127.0.0.1:${(api.address() as { port: number }).port}/whoami`;
    deployment = await startDeployment();
  }, DEPLOYMENT_START_TIMEOUT_MS);

  afterAll(async () => {
    await subscriber?.close();
    await deployment?.stop();
    await new Promise((closed) => api.close(closed));
  });

  test('a process using a connection runs, and an outside subscriber reads its events', async () => {
    const system = deployment.call;
    const org = await system('POST', '/api/v1/organizations', { name: 'Authorized' });
    expect(org.status).toBe(201);
    const events: PublishedEventEnvelope[] = [];
    let completed: (envelope: PublishedEventEnvelope) => void = () => undefined;
    const completion = new Promise<PublishedEventEnvelope>((done) => (completed = done));
    subscriber = await deployment.connectNatsAs('subscriber');
    await subscriber.subscribe('weft.events.execution.>', { durable: 'e2e-execution-reader' }, async (event) => {
      const envelope = event.payload as PublishedEventEnvelope;
      events.push(envelope);
      if (envelope.type === 'ExecutionCompleted') completed(envelope);
    });

    const connection = await system('POST', `/api/v1/connections/by-org/${org.body.id}`, {
      type: 'http',
      name: 'the API',
      data: { token: TOKEN },
    });
    expect(connection.status).toBe(201);
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'read with a secret',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'call',
          type: 'integrationNode',
          position: { x: 1, y: 0 },
          config: { label: 'Call', method: 'GET', url: apiUrl, connectionId: connection.body.id, retries: 0 },
        },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'call' },
        { source_node_id: 'call', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const run = await system('POST', `/api/v1/processes/test/${created.body.id}`, {});
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('completed');
    expect(run.body.output_data.Out.Call).toMatchObject({ status: 200, body: { authorized: true } });
    expect(tokensSeen).toEqual([`Bearer ${TOKEN}`]);

    const finished = await completion;
    expect(finished.streamId).toBe(`execution-${run.body.execution_id}`);
    expect(events.map((event) => event.type)).toContain('ExecutionStarted');
    // Every service did all its work within its permissions: the server refused nothing.
    expect(deployment.output()).not.toMatch(/Permissions Violation/i);
  }, 60_000);
});
