import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, type Deployment } from './support/deployment.js';
import { useSharedDeployment } from './support/shared-deployment.js';

/**
 * Weft as deployed (WEFT_E2E_DEPLOYMENT): the built all-in-one, or the gateway, the process
 * catalog and two engine replicas (and trigger and testing) each its own process from its built
 * dist/main.js, over a NATS server and a fresh PostgreSQL database of the deployment's own.
 */
describe(`processes run behind the gateway (${deploymentKind()})`, () => {
  let deployment: Deployment;

  beforeAll(async () => {
    deployment = await useSharedDeployment();
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await deployment?.stop();
  });

  test('a process created through the gateway runs on an engine and shows in its history', async () => {
    const system = deployment.call;
    const org = await system('POST', '/api/v1/organizations', { name: 'Deployed' });
    expect(org.status).toBe(201);
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'double',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'dbl',
          type: 'scriptNode',
          position: { x: 1, y: 0 },
          config: { label: 'Double', code: 'return { v: input.In.n * 2 };' },
        },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'dbl' },
        { source_node_id: 'dbl', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const results = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) => system('POST', `/api/v1/processes/test/${created.body.id}`, { n })),
    );
    for (const [index, run] of results.entries()) {
      expect(run.status).toBe(200);
      expect(run.body.status).toBe('completed');
      expect(run.body.output_data.Out.Double).toEqual({ v: (index + 1) * 2 });
    }
    const history = await system('GET', `/api/v1/processes/executions/${created.body.id}`);
    expect(history.body.total).toBe(6);
  }, 60_000);
});
