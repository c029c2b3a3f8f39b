import { randomUUID } from 'node:crypto';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, type Deployment } from './support/deployment.js';
import { useSharedDeployment } from './support/shared-deployment.js';

/**
 * The engine behind the gateway, as a user calls it: real keys over HTTP, the catalog making the
 * processes, the engine running them, in both modes.
 */
describe(`executions over HTTP (${deploymentKind()})`, () => {
  let under: Deployment;
  let acme: { id: string; key: string; userId: string };
  let globex: { id: string; key: string };
  let waiting: string; // input -> 60 s wait -> output: runs until cancelled
  let quick: string; // input -> output
  let restrictedKey: string; // acme's, restricted to `quick`

  const as = (key: string) => client(under.baseUrl, key);

  const organization = async (name: string, extra: Record<string, unknown> = {}) => {
    const system = as(under.key);
    const org = await system('POST', '/api/v1/organizations', { name });
    expect(org.status).toBe(201);
    const userId = randomUUID();
    const issued = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: 'user',
      userName: `${name} user`,
      userId,
      ...extra,
    });
    expect(issued.status).toBe(201);
    return { id: org.body.id as string, key: issued.body.key as string, userId };
  };

  const createProcess = async (name: string, middle: Record<string, unknown> | undefined) => {
    const nodes = [
      { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
      ...(middle ? [{ id: 'mid', ...middle }] : []),
      { id: 'out', type: 'outputNode', config: { label: 'Out' } },
    ];
    const edges = middle
      ? [
          { source_node_id: 'in', target_node_id: 'mid' },
          { source_node_id: 'mid', target_node_id: 'out' },
        ]
      : [{ source_node_id: 'in', target_node_id: 'out' }];
    const created = await as(acme.key)('POST', `/api/v1/processes/by-org/${acme.id}`, { name, nodes, edges });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  beforeAll(async () => {
    under = await useSharedDeployment();
    acme = await organization('Acme');
    globex = await organization('Globex');
    waiting = await createProcess('Waits', { type: 'waitNode', config: { label: 'Pause', seconds: 60 } });
    quick = await createProcess('Quick', undefined);
    const issued = await as(under.key)('POST', `/api/v1/api-keys/by-org/${acme.id}`, {
      name: 'only quick',
      userName: 'Rita',
      userId: randomUUID(),
      processIds: [quick],
    });
    expect(issued.status).toBe(201);
    restrictedKey = issued.body.key as string;
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await under?.stop();
  });

  /** Starts `waiting` and answers its execution id once it is running (202 after a 1 s wait). */
  const startWaiting = async (): Promise<string> => {
    const started = await as(acme.key)('POST', `/api/v1/processes/test/${waiting}?waitSeconds=1`, { n: 1 });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running' });
    return started.body.execution_id as string;
  };

  test('an execution id answered with 202 is readable and cancellable at once, and the cancel holds', async () => {
    const user = as(acme.key);
    const pausing = await createProcess('Cancelled at once', {
      type: 'waitNode',
      config: { label: 'Pause', seconds: 60 },
    });
    for (let attempt = 0; attempt < 5; attempt++) {
      const accepted = await user('POST', `/api/v1/processes/test/${pausing}?waitSeconds=0`, { attempt });
      expect(accepted.status).toBe(202);
      const id = accepted.body.execution_id as string;
      const read = await user('GET', `/api/v1/processes/execution/${id}`);
      expect(read.status).toBe(200);
      expect(read.body.status).toBe('running');
      const cancelled = await user('POST', `/api/v1/processes/execution/${id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('cancelled');
    }
    // Whether an engine had taken them or not, every one stays cancelled.
    const history = await user('GET', `/api/v1/processes/executions/${pausing}`);
    expect(history.body.total).toBe(5);
    expect(history.body.items.map((item: { status: string }) => item.status)).toEqual(Array(5).fill('cancelled'));
  });

  test('a user runs, reads, lists, cancels and counts executions with their key', async () => {
    const user = as(acme.key);
    const done = await user('POST', `/api/v1/processes/test/${quick}`, { amount: 3 });
    expect(done.status).toBe(200);
    // Embedded, the body arrives from the bus as JSON text and is sent as it is: typed as JSON all the same.
    expect(done.contentType).toBe('application/json; charset=utf-8');
    expect(done.body).toMatchObject({
      status: 'completed',
      process_id: quick,
      organization_id: acme.id,
      triggered_by_user_id: acme.userId,
      output_data: { Out: { In: { amount: 3 } } },
    });

    const executionId = await startWaiting();
    const running = await user('GET', `/api/v1/processes/execution/${executionId}`);
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ execution_id: executionId, status: 'running', input_data: { n: 1 } });

    const cancelled = await user('POST', `/api/v1/processes/execution/${executionId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ execution_id: executionId, status: 'cancelled' });
    const again = await user('POST', `/api/v1/processes/execution/${executionId}/cancel`);
    expect(again.status).toBe(409);
    expect(again.contentType).toContain('application/problem+json');
    expect((await user('GET', `/api/v1/processes/execution/${executionId}`)).body).toMatchObject({
      status: 'cancelled',
      node_states: expect.arrayContaining([expect.objectContaining({ node_name: 'Pause', status: 'cancelled' })]),
    });

    const history = await user('GET', `/api/v1/processes/executions/${waiting}`);
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ page: 1, pageSize: 20, total: 1 });
    expect(history.body.items).toEqual([
      expect.objectContaining({ execution_id: executionId, status: 'cancelled', process_id: waiting }),
    ]);
    expect(history.body.items[0]).not.toHaveProperty('input_data');

    const stats = await user('GET', `/api/v1/processes/execution-stats/${waiting}`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ process_id: waiting, total_runs: 1, cancelled: 1, completed: 0, running: 0 });
  });

  test("another organization's executions answer 404 and are left as they were", async () => {
    const executionId = await startWaiting();
    const stranger = as(globex.key);
    for (const [method, path] of [
      ['GET', `/api/v1/processes/execution/${executionId}`],
      ['POST', `/api/v1/processes/execution/${executionId}/cancel`],
      ['GET', `/api/v1/processes/executions/${waiting}`],
      ['GET', `/api/v1/processes/execution-stats/${waiting}`],
      ['POST', `/api/v1/processes/test/${waiting}`],
    ] as const) {
      const answer = await stranger(method, path, method === 'POST' ? {} : undefined);
      expect([method, path, answer.status, answer.contentType]).toEqual([
        method,
        path,
        404,
        expect.stringContaining('application/problem+json'),
      ]);
    }
    // Nothing changed: still running, and no new execution.
    const owner = as(acme.key);
    expect((await owner('GET', `/api/v1/processes/execution/${executionId}`)).body).toMatchObject({
      status: 'running',
    });
    const before = (await owner('GET', `/api/v1/processes/executions/${waiting}`)).body.total as number;
    expect((await owner('POST', `/api/v1/processes/execution/${executionId}/cancel`)).status).toBe(200);
    expect((await owner('GET', `/api/v1/processes/executions/${waiting}`)).body.total).toBe(before);
  });

  test('a key restricted to some processes gets 403 on the executions of the others', async () => {
    const executionId = await startWaiting();
    const restricted = as(restrictedKey);
    for (const [method, path] of [
      ['POST', `/api/v1/processes/test/${waiting}`],
      ['GET', `/api/v1/processes/executions/${waiting}`],
      ['GET', `/api/v1/processes/execution-stats/${waiting}`],
      ['GET', `/api/v1/processes/execution/${executionId}`],
      ['POST', `/api/v1/processes/execution/${executionId}/cancel`],
    ] as const) {
      const answer = await restricted(method, path, method === 'POST' ? {} : undefined);
      expect([method, path, answer.status, answer.contentType]).toEqual([
        method,
        path,
        403,
        expect.stringContaining('application/problem+json'),
      ]);
    }
    const owner = as(acme.key);
    expect((await owner('GET', `/api/v1/processes/execution/${executionId}`)).body).toMatchObject({
      status: 'running',
    });
    expect((await owner('POST', `/api/v1/processes/execution/${executionId}/cancel`)).status).toBe(200);
    // Its own process it runs and reads.
    const ran = await restricted('POST', `/api/v1/processes/test/${quick}`, { ok: true });
    expect(ran.status).toBe(200);
    expect((await restricted('GET', `/api/v1/processes/execution/${ran.body.execution_id}`)).status).toBe(200);
    expect((await restricted('GET', `/api/v1/processes/executions/${quick}`)).status).toBe(200);
    expect((await restricted('GET', `/api/v1/processes/execution-stats/${quick}`)).status).toBe(200);
  });
});
