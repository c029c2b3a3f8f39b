import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind } from '../../all-in-one/test/support/deployment.js';
import { startTestingDeployment, type TestingStack } from './support/testing-stack.js';

/** Test cases leave with an export and arrive with an import or a fork, pointed at the new input node. */
describe(`test cases in export, import and fork (${deploymentKind()})`, () => {
  let stack: TestingStack;
  let processId: string;
  let inputNodeId: string;
  const user = () => stack.as(stack.userKey);
  const schema = { type: 'object', properties: { Out: { properties: { n: { type: 'number', maximum: 10 } } } } };

  const casesOf = async (id: string) =>
    (await user()('GET', `/api/v1/test-cases/by-process/${id}`)).body.items as {
      id: string;
      name: string;
      inputNodeId: string;
      tags: string[];
      disabled: boolean;
      expectedOutputSchema: unknown;
    }[];
  const processCount = async () =>
    (await user()('GET', `/api/v1/processes/by-org/${stack.orgId}?pageSize=200`)).body.total as number;

  beforeAll(async () => {
    stack = await startTestingDeployment();
    processId = await stack.createProcess(
      'Travels',
      [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'mid', type: 'scriptNode', config: { label: 'Echo', code: 'return { n: input.In.n };' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out', fields: { n: '{{input["Echo"]["n"]}}' } } },
      ],
      [
        { source_node_id: 'in', target_node_id: 'mid' },
        { source_node_id: 'mid', target_node_id: 'out' },
      ],
    );
    inputNodeId = await stack.nodeId(processId, 'In');
    for (const [name, n, disabled] of [
      ['small', 1, false],
      ['large', 50, true],
    ] as const) {
      const created = await user()('POST', `/api/v1/test-cases/by-process/${processId}`, {
        name,
        inputNodeId,
        inputData: { n },
        expectedOutputSchema: schema,
        ignoreFields: ['$.Out.stamp'],
        tags: ['travel'],
        disabled,
      });
      expect(created.status).toBe(201);
    }
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await stack?.stop();
  });

  test('the export document carries every test case, naming its input node by its key', async () => {
    const exported = await user()('GET', `/api/v1/processes/${processId}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body.nodes.map((node: { id: string }) => node.id)).toContain(inputNodeId);
    expect(exported.body.testCases).toEqual([
      {
        name: 'large',
        description: '',
        inputNodeId,
        inputData: { n: 50 },
        expectedOutputSchema: schema,
        expectedFiles: null,
        ignoreFields: ['$.Out.stamp'],
        tags: ['travel'],
        disabled: true,
      },
      expect.objectContaining({ name: 'small', inputNodeId, disabled: false }),
    ]);
  });

  test('an import creates the cases on the new process, on its new input node, and they run', async () => {
    const exported = await user()('GET', `/api/v1/processes/${processId}/export`);
    const imported = await user()('POST', `/api/v1/processes/bulk-import/${stack.orgId}`, exported.body);
    expect(imported.status).toBe(201);
    const newInput = await stack.nodeId(imported.body.id, 'In');
    expect(newInput).not.toBe(inputNodeId);
    const cases = await casesOf(imported.body.id);
    expect(cases.map((item) => [item.name, item.inputNodeId, item.disabled])).toEqual([
      ['large', newInput, true],
      ['small', newInput, false],
    ]);
    const small = cases.find((item) => item.name === 'small')!;
    const run = await user()('POST', `/api/v1/test-execution/${small.id}/run`);
    expect(run.body).toMatchObject({ status: 'passed', processId: imported.body.id });
  });

  test('an import whose test case names no input node of the document: 400, nothing imported', async () => {
    const exported = await user()('GET', `/api/v1/processes/${processId}/export`);
    const before = await processCount();
    const midKey = exported.body.nodes.find((node: { config: { label: string } }) => node.config.label === 'Echo').id;
    const document = {
      ...exported.body,
      testCases: [
        { ...exported.body.testCases[0], inputNodeId: midKey },
        { ...exported.body.testCases[1], expectedOutputSchema: { type: 'nope' } },
      ],
    };
    const refused = await user()('POST', `/api/v1/processes/bulk-import/${stack.orgId}`, document);
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((error: { path: string }) => error.path)).toEqual([
      '/testCases/0/inputNodeId',
      '/testCases/1/expectedOutputSchema',
    ]);
    expect(await processCount()).toBe(before);
  });

  test('a fork copies the cases onto its own input node; the source keeps its own', async () => {
    const forked = await user()('POST', `/api/v1/processes/fork/${processId}`, { name: 'Travels fork' });
    expect(forked.status).toBe(201);
    const forkInput = await stack.nodeId(forked.body.id, 'In');
    const cases = await casesOf(forked.body.id);
    expect(cases.map((item) => [item.name, item.inputNodeId, item.tags])).toEqual([
      ['large', forkInput, ['travel']],
      ['small', forkInput, ['travel']],
    ]);
    expect((await casesOf(processId)).map((item) => item.inputNodeId)).toEqual([inputNodeId, inputNodeId]);
  });
});
