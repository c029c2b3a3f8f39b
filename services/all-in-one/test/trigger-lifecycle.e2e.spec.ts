import { randomUUID } from 'node:crypto';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

/**
 * Listeners follow the running flag (spec "Process running flag"): they start with the process,
 * stop with it, come back after a restart of the service, and show in the listeners endpoint.
 * Bad trigger configs are lint findings and block the start. Both deployments.
 */
describe(`trigger lifecycle (${deploymentKind()})`, () => {
  let under: Deployment;
  let org: { id: string; key: string };

  const as = (key: string) => client(under.baseUrl, key);

  beforeAll(async () => {
    under = await startDeployment();
    const system = under.call;
    const created = await system('POST', '/api/v1/organizations', { name: 'Acme' });
    const key = await system('POST', `/api/v1/api-keys/by-org/${created.body.id}`, {
      name: 'k',
      userName: 'Ann',
      userId: randomUUID(),
    });
    org = { id: created.body.id, key: key.body.key };
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await under?.stop();
  });

  const createProcess = async (inputs: Record<string, unknown>[]): Promise<string> => {
    const nodes = [
      ...inputs.map((config, index) => ({ id: `in${index}`, type: 'inputNode', config })),
      { id: 'out', type: 'outputNode', config: { label: 'Out' } },
    ];
    const edges = inputs.map((_, index) => ({ source_node_id: `in${index}`, target_node_id: 'out' }));
    const created = await as(org.key)('POST', `/api/v1/processes/by-org/${org.id}`, {
      name: `p-${randomUUID()}`,
      nodes,
      edges,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const listeners = async (id: string) => {
    const listed = await as(org.key)('GET', `/api/v1/processes/${id}/listeners`);
    expect(listed.status).toBe(200);
    return listed.body as {
      is_running: boolean;
      listeners: { label: string; state: string; next_run_at: string | null }[];
    };
  };
  const byLabel = (body: Awaited<ReturnType<typeof listeners>>) =>
    Object.fromEntries(body.listeners.map((listener) => [listener.label, listener]));

  test('listeners start with the process, stop with it, and come back after a restart', async () => {
    const id = await createProcess([
      { label: 'Hook', triggerType: 'webhook' },
      { label: 'Yearly', triggerType: 'schedule', cronExpression: '0 0 1 1 *', timezone: 'Europe/Berlin' },
      { label: 'ByHand', triggerType: 'manual' },
    ]);
    expect(byLabel(await listeners(id))).toMatchObject({
      Hook: { state: 'stopped' },
      Yearly: { state: 'stopped' },
      ByHand: { state: 'none' },
    });
    expect((await as(org.key)('POST', `/api/v1/processes/start/${id}`)).status).toBe(200);
    // The webhook's answer shows its listener runs; the schedule's next tick is planned.
    expect(
      (await as(org.key)('POST', `/api/v1/processes/${id}/webhook?inputNodeId=${await nodeId(id, 'Hook')}`, {})).status,
    ).toBe(202);
    const running = byLabel(await listeners(id));
    expect(running.Hook?.state).toBe('listening');
    expect(running.Yearly?.state).toBe('listening');
    expect(running.Yearly?.next_run_at).toMatch(/^\d{4}-12-31T23:00:00\.000Z$/);

    expect((await as(org.key)('POST', `/api/v1/processes/stop/${id}`)).status).toBe(200);
    expect(
      (await as(org.key)('POST', `/api/v1/processes/${id}/webhook?inputNodeId=${await nodeId(id, 'Hook')}`, {})).status,
    ).toBe(409);
    expect(byLabel(await listeners(id))).toMatchObject({ Hook: { state: 'stopped' }, Yearly: { state: 'stopped' } });

    expect((await as(org.key)('POST', `/api/v1/processes/start/${id}`)).status).toBe(200);
    // The process that holds the listeners restarts (all of Weft when embedded, the trigger service when distributed).
    await under.restart(under.kind === 'embedded' ? 'weft' : 'trigger');
    // Restored from the catalog's running processes, before the service answers its first request.
    let answered = await as(org.key)('GET', `/api/v1/processes/${id}/listeners`).catch(() => undefined);
    for (let tries = 0; answered?.status !== 200 && tries < 300; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      answered = await as(org.key)('GET', `/api/v1/processes/${id}/listeners`).catch(() => undefined);
    }
    const restored = byLabel(answered?.body);
    expect(restored.Hook?.state).toBe('listening');
    expect(restored.Yearly?.state).toBe('listening');
    expect(
      (await as(org.key)('POST', `/api/v1/processes/${id}/webhook?inputNodeId=${await nodeId(id, 'Hook')}`, {})).status,
    ).toBe(202);
  }, 180_000);

  test('a bad cron expression, time zone or connection is a lint finding and the process does not start', async () => {
    const connection = await as(org.key)('POST', `/api/v1/connections/by-org/${org.id}`, {
      type: 'http',
      name: 'Not a mailbox',
      data: { token: 't' },
    });
    expect(connection.status).toBe(201);
    const id = await createProcess([
      { label: 'Tick', triggerType: 'schedule', cronExpression: '61 * * * *', timezone: 'Mars/Olympus' },
      {
        label: 'Mail',
        triggerType: 'gmail',
        authMethod: 'oauth',
        connectionId: connection.body.id,
        pollingInterval: 0,
      },
    ]);
    const lint = await as(org.key)('POST', `/api/v1/processes/${id}/lint`);
    expect(lint.status).toBe(200);
    const messages = (lint.body.findings as { check: string; message: string }[])
      .filter((finding) => finding.check.startsWith('trigger-'))
      .map((finding) => finding.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringContaining('/cronExpression'),
        expect.stringContaining('/timezone'),
        expect.stringContaining('/pollingInterval'),
        expect.stringMatching(/connectionId: connection .* is a http connection; it must be gmail-oauth/),
      ]),
    );
    const start = await as(org.key)('POST', `/api/v1/processes/start/${id}`);
    expect(start.status).toBe(400);
    expect((await listeners(id)).is_running).toBe(false);
  });

  const nodeId = async (processId: string, label: string): Promise<string> => {
    const process = await as(org.key)('GET', `/api/v1/processes/by-id/${processId}`);
    return (process.body.nodes as { id: string; config: { label: string } }[]).find(
      (node) => node.config.label === label,
    )!.id;
  };
});
