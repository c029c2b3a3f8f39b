import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind } from '../../all-in-one/test/support/deployment.js';
import { GatedServer, readUntil, startTestingDeployment, type TestingStack } from './support/testing-stack.js';

/** The testing API as a caller uses it through the gateway, in both modes (docs/testing.md). */
describe(`testing service (${deploymentKind()})`, () => {
  let stack: TestingStack;
  let gated: GatedServer;
  const processes: Record<string, string> = {};
  const user = () => stack.as(stack.userKey);
  const system = () => stack.as(stack.systemKey);

  const webhookIn = { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } };
  const out = (fields: Record<string, string>) => ({ id: 'out', type: 'outputNode', config: { label: 'Out', fields } });
  const chain = [
    { source_node_id: 'in', target_node_id: 'mid' },
    { source_node_id: 'mid', target_node_id: 'out' },
  ];
  const script = (label: string, code: string) => ({ id: 'mid', type: 'scriptNode', config: { label, code } });

  const inputNode = (process: string) => stack.nodeId(processes[process]!, process === 'mail' ? 'Mail' : 'In');
  const createCase = async (process: string, body: Record<string, unknown>) => {
    const created = await user()('POST', `/api/v1/test-cases/by-process/${processes[process]}`, {
      inputNodeId: await inputNode(process),
      ...body,
    });
    if (created.status !== 201) throw new Error(`test case not created: ${JSON.stringify(created.body)}`);
    return created.body.id as string;
  };
  const run = async (caseId: string) => {
    const answer = await user()('POST', `/api/v1/test-execution/${caseId}/run`);
    expect(answer.status).toBe(200);
    return answer.body;
  };

  const calcSchema = {
    type: 'object',
    required: ['Out'],
    properties: {
      Out: {
        type: 'object',
        required: ['total'],
        additionalProperties: false,
        properties: {
          total: { type: 'number', minimum: 0 },
          invoice: {
            type: 'object',
            properties: { lines: { type: 'array', items: { properties: { amount: { type: 'number', minimum: 0 } } } } },
          },
        },
      },
    },
  };

  beforeAll(async () => {
    gated = new GatedServer();
    await gated.start();
    // Small inline values: a large output stays in the execution record (and the engine's blob storage).
    stack = await startTestingDeployment({ WEFT_EVENT_VALUE_INLINE_MAX_BYTES: '4096' });
    processes.calc = await stack.createProcess(
      'Calc',
      [
        webhookIn,
        script(
          'Compute',
          'return { total: input.In.a + input.In.b, invoice: { lines: input.In.lines ?? [] }, stamp: Date.now() };',
        ),
        out({
          total: '{{input["Compute"]["total"]}}',
          invoice: '{{input["Compute"]["invoice"]}}',
          stamp: '{{input["Compute"]["stamp"]}}',
        }),
      ],
      chain,
    );
    processes.boom = await stack.createProcess(
      'Boom',
      [webhookIn, script('Boom', 'throw new Error("boom");'), out({})],
      chain,
    );
    processes.slow = await stack.createProcess(
      'Slow',
      [webhookIn, { id: 'mid', type: 'waitNode', config: { label: 'Pause', seconds: 30 } }, out({})],
      chain,
      { timeout_seconds: 1 },
    );
    processes.files = await stack.createProcess(
      'Files',
      [webhookIn, script('Maker', 'return { files: input.In.files };'), out({ files: '{{input["Maker"]["files"]}}' })],
      chain,
    );
    processes.mail = await stack.createProcess(
      'Mail',
      [
        { id: 'in', type: 'inputNode', config: { label: 'Mail', triggerType: 'gmail', authMethod: 'oauth' } },
        {
          id: 'mid',
          type: 'scriptNode',
          config: { label: 'Read', code: 'return { subject: input.Mail.subject, from: input.Mail.sender };' },
        },
        out({ subject: '{{input["Read"]["subject"]}}', from: '{{input["Read"]["from"]}}' }),
      ],
      chain,
    );
    processes.gated = await stack.createProcess(
      'Gated',
      [
        webhookIn,
        { id: 'mid', type: 'integrationNode', config: { label: 'Call', method: 'GET', url: gated.url } },
        out({}),
      ],
      chain,
    );
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await stack?.stop();
    await gated?.stop();
  });

  test('a test case naming a non-input node, a schema that does not compile and a bad JSONPath: one 400 listing all, nothing stored', async () => {
    const refused = await user()('POST', `/api/v1/test-cases/by-process/${processes.calc}`, {
      name: 'bad',
      inputNodeId: await stack.nodeId(processes.calc!, 'Compute'),
      expectedOutputSchema: { type: 'no-such-type' },
      ignoreFields: ['$..[?(@.x)]'],
    });
    expect(refused.status).toBe(400);
    expect(refused.contentType).toContain('application/problem+json');
    expect(refused.body.errors.map((error: { path: string }) => error.path).sort()).toEqual(
      ['/expectedOutputSchema', '/ignoreFields/0', '/inputNodeId'].sort(),
    );
    const listed = await user()('GET', `/api/v1/test-cases/by-process/${processes.calc}`);
    expect(listed.body.items.filter((item: { name: string }) => item.name === 'bad')).toEqual([]);
  });

  test('input the database cannot hold is a 400 naming each place, and nothing is stored', async () => {
    const before = (await user()('GET', `/api/v1/test-cases/by-process/${processes.calc}`)).body.total as number;
    const refused = await user()('POST', `/api/v1/test-cases/by-process/${processes.calc}`, {
      name: 'nul',
      inputNodeId: await inputNode('calc'),
      inputData: { text: 'a\u0000b', ['k\u0000']: 1 },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].path).toMatch(/^\/inputData\//);
    const byTag = await user()('GET', `/api/v1/test-cases/by-process/${processes.calc}?tag=a%00b`);
    expect(byTag.status).toBe(400);
    expect((await user()('GET', `/api/v1/test-cases/by-process/${processes.calc}`)).body.total).toBe(before);
  });

  test('passed: the output matches; the run links its execution and its user', async () => {
    const id = await createCase('calc', {
      name: 'sums',
      inputData: { a: 2, b: 3 },
      expectedOutputSchema: calcSchema,
      ignoreFields: ['$.Out.stamp'],
    });
    const result = await run(id);
    expect(result).toMatchObject({
      testCaseId: id,
      processId: processes.calc,
      status: 'passed',
      validationResults: { valid: true, errors: [] },
      schemaErrors: [],
      runByUserId: stack.userId,
    });
    expect(result.actualOutput.Out.total).toBe(5);
    expect(result.processExecutionId).toBe(result.executionId);
    const execution = await user()('GET', `/api/v1/processes/execution/${result.executionId}`);
    expect(execution.body).toMatchObject({
      status: 'completed',
      trigger_node_id: await inputNode('calc'),
      input_data: { a: 2, b: 3 },
    });
    const detail = await user()('GET', `/api/v1/test-runs/${result.id}`);
    expect(
      detail.body.nodeStates.map((node: { node_name: string; status: string }) => [node.node_name, node.status]),
    ).toEqual(
      expect.arrayContaining([
        ['In', 'completed'],
        ['Compute', 'completed'],
        ['Out', 'completed'],
      ]),
    );
  });

  test('failed: one violation per mismatch at its exact JSONPath, and readable schemaErrors', async () => {
    const id = await createCase('calc', {
      name: 'negative',
      inputData: { a: 1, b: -5, lines: [{ amount: 1 }, { amount: 2 }, { amount: -3 }] },
      expectedOutputSchema: calcSchema,
      ignoreFields: ['$.Out.stamp'],
    });
    const result = await run(id);
    expect(result.status).toBe('failed');
    expect(result.validationResults.valid).toBe(false);
    expect(result.validationResults.errors).toEqual(
      expect.arrayContaining([
        { field: 'Out.total', message: 'must be >= 0', path: '$.Out.total' },
        { field: 'Out.invoice.lines[2].amount', message: 'must be >= 0', path: '$.Out.invoice.lines[2].amount' },
      ]),
    );
    expect(result.validationResults.errors).toHaveLength(2);
    expect(result.schemaErrors).toEqual(
      expect.arrayContaining(['$.Out.total must be >= 0', '$.Out.invoice.lines[2].amount must be >= 0']),
    );
  });

  test('ignoreFields: without it the volatile field fails the run, with it the run passes', async () => {
    const strict = await run(
      await createCase('calc', { name: 'strict', inputData: { a: 1, b: 1 }, expectedOutputSchema: calcSchema }),
    );
    expect(strict.status).toBe('failed');
    expect(strict.validationResults.errors).toEqual([
      { field: 'Out.stamp', message: 'is not allowed', path: '$.Out.stamp' },
    ]);
    const lenient = await run(
      await createCase('calc', {
        name: 'lenient',
        inputData: { a: 1, b: 1 },
        expectedOutputSchema: calcSchema,
        ignoreFields: ['$.Out.stamp'],
      }),
    );
    expect(lenient.status).toBe('passed');
    expect(typeof lenient.actualOutput.Out.stamp).toBe('number');
  });

  test('error: the execution failed', async () => {
    const result = await run(await createCase('boom', { name: 'boom' }));
    expect(result).toMatchObject({ status: 'error', validationResults: null });
    expect(result.errorMessage).toContain('boom');
  });

  test('timeout: the execution timed out', async () => {
    const result = await run(await createCase('slow', { name: 'slow' }));
    expect(result.status).toBe('timeout');
    const execution = await user()('GET', `/api/v1/processes/execution/${result.executionId}`);
    expect(execution.body.status).toBe('timeout');
  });

  test('expectedFiles: matched by pattern and size, and each mismatch named', async () => {
    const files = [
      { name: 'report-7.pdf', url: 'blob://a', size: 4096 },
      { name: 'photo.png', url: 'blob://b', size: 12 },
    ];
    const matching = await run(
      await createCase('files', {
        name: 'files ok',
        inputData: { files },
        expectedFiles: { count: 2, files: [{ namePattern: 'report-*.pdf', minSize: 1000 }, { namePattern: '*.png' }] },
      }),
    );
    expect(matching.status).toBe('passed');
    expect(matching.fileComparisonResults.files).toEqual([
      expect.objectContaining({
        matched: true,
        actualFile: expect.objectContaining({ name: 'report-7.pdf', path: '$.Out.files[0]' }),
      }),
      expect.objectContaining({ matched: true, actualFile: expect.objectContaining({ name: 'photo.png' }) }),
    ]);
    const mismatching = await run(
      await createCase('files', {
        name: 'files bad',
        inputData: { files },
        expectedFiles: { count: 3, files: [{ namePattern: '*.png', minSize: 100 }, { namePattern: '*.csv' }] },
      }),
    );
    expect(mismatching.status).toBe('failed');
    expect(mismatching.validationResults.errors).toEqual([
      { field: 'files', message: 'expected 3 files, found 2', path: '$' },
      { field: 'files[0]', message: 'photo.png is 12 bytes, below the minimum of 100', path: '$.Out.files[1].size' },
      { field: 'files[1]', message: 'no file matches *.csv', path: '$' },
    ]);
    expect(mismatching.fileComparisonResults.files.map((file: { reason: string }) => file.reason)).toEqual([
      'photo.png is 12 bytes, below the minimum of 100',
      'no file matches *.csv',
    ]);
  });

  test('an output over the inline limit is not copied into the run; reading the run shows it from the execution', async () => {
    const result = await run(
      await createCase('calc', {
        name: 'large output',
        inputData: { a: 1, b: 1, lines: Array.from({ length: 300 }, (_, index) => ({ amount: index })) },
        expectedOutputSchema: calcSchema,
        ignoreFields: ['$.Out.stamp'],
      }),
    );
    expect(result).toMatchObject({ status: 'passed', actualOutput: null, actualOutputOmitted: true });
    const detail = await user()('GET', `/api/v1/test-runs/${result.id}`);
    expect(detail.body.actualOutput.Out.invoice.lines).toHaveLength(300);
  });

  test('a mail process is tested with mail fields, no listener involved', async () => {
    const result = await run(
      await createCase('mail', {
        name: 'mail',
        inputData: { id: 'm1', subject: 'Invoice 42', sender: 'bob@example.com', body: 'hi' },
        expectedOutputSchema: {
          type: 'object',
          properties: { Out: { properties: { subject: { const: 'Invoice 42' }, from: { const: 'bob@example.com' } } } },
        },
      }),
    );
    expect(result.status).toBe('passed');
  });

  test('test case CRUD with tag and disabled filters; another key sees nothing', async () => {
    const id = await createCase('boom', { name: 'crud', tags: ['smoke'] });
    const read = await user()('GET', `/api/v1/test-cases/by-id/${id}`);
    expect(read.body).toMatchObject({
      id,
      processId: processes.boom,
      name: 'crud',
      tags: ['smoke'],
      disabled: false,
      inputData: {},
    });
    const changed = await user()('PUT', `/api/v1/test-cases/by-id/${id}`, {
      name: 'crud 2',
      inputNodeId: await inputNode('boom'),
      tags: ['nightly'],
      disabled: true,
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: 'crud 2', tags: ['nightly'], disabled: true });
    const refusedPut = await user()('PUT', `/api/v1/test-cases/by-id/${id}`, {
      name: 'x',
      inputNodeId: await stack.nodeId(processes.boom!, 'Out'),
    });
    expect(refusedPut.status).toBe(400);
    const byTag = await user()('GET', `/api/v1/test-cases/by-process/${processes.boom}?tag=nightly&disabled=true`);
    expect(byTag.body).toMatchObject({ page: 1, pageSize: 20, total: 1 });
    expect(byTag.body.items[0].id).toBe(id);
    const enabledOnly = await user()('GET', `/api/v1/test-cases/by-process/${processes.boom}?disabled=false`);
    expect(enabledOnly.body.items.map((item: { id: string }) => item.id)).not.toContain(id);
    const restricted = await stack.restrictedKey([processes.calc!]);
    expect((await stack.as(restricted)('GET', `/api/v1/test-cases/by-id/${id}`)).status).toBe(403);
    expect((await stack.as(restricted)('POST', `/api/v1/test-execution/${id}/run`)).status).toBe(403);
    expect((await user()('DELETE', `/api/v1/test-cases/by-id/${id}`)).status).toBe(204);
    expect((await user()('GET', `/api/v1/test-cases/by-id/${id}`)).status).toBe(404);
  });

  test('batch: system key only; ids and tags together run their union once; disabled cases are skipped; stats follow', async () => {
    const ok = await createCase('calc', {
      name: 'b-ok',
      inputData: { a: 1, b: 2 },
      ignoreFields: ['$.Out.stamp'],
      expectedOutputSchema: calcSchema,
      tags: ['smoke'],
    });
    const bad = await createCase('calc', {
      name: 'b-bad',
      inputData: { a: 1, b: -2 },
      ignoreFields: ['$.Out.stamp'],
      expectedOutputSchema: calcSchema,
      tags: ['smoke', 'edge'],
    });
    const off = await createCase('calc', { name: 'b-off', inputData: { a: 1, b: 2 }, tags: ['smoke'], disabled: true });
    const body = { processId: processes.calc, testCaseIds: [ok, bad], tags: ['smoke'] };
    expect((await user()('POST', '/api/v1/test-runs/batch', body)).status).toBe(403);
    const batch = await system()('POST', '/api/v1/test-runs/batch', body);
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ status: 'completed', total: 2, done: 2 });
    expect(batch.body.skipped).toEqual([{ testCaseId: off, name: 'b-off', reason: 'disabled' }]);
    expect(
      batch.body.runs.map((item: { testCaseId: string; status: string }) => [item.testCaseId, item.status]).sort(),
    ).toEqual(
      [
        [ok, 'passed'],
        [bad, 'failed'],
      ].sort(),
    );
    expect(batch.body.stats).toMatchObject({ total: 2, passed: 1, failed: 1, error: 0, timeout: 0, passRate: 0.5 });
    const byTag = await system()('POST', '/api/v1/test-runs/batch', { processId: processes.calc, tags: ['edge'] });
    expect(byTag.body.runs.map((item: { testCaseId: string }) => item.testCaseId)).toEqual([bad]);
    const progress = await system()('GET', `/api/v1/test-runs/batches/${batch.body.id}`);
    expect(progress.body).toMatchObject({ id: batch.body.id, status: 'completed', done: 2, total: 2 });
  });

  test('stats and the run list after a mixed batch of every status', async () => {
    const mixed = await stack.createProcess(
      'Mixed',
      [
        webhookIn,
        script('Step', 'if (input.In.mode === "boom") throw new Error("boom"); return { n: input.In.n };'),
        out({ n: '{{input["Step"]["n"]}}' }),
      ],
      chain,
    );
    processes.mixed = mixed;
    const schema = { type: 'object', properties: { Out: { properties: { n: { type: 'number', maximum: 10 } } } } };
    await createCase('mixed', { name: 'm-pass', inputData: { n: 1 }, expectedOutputSchema: schema });
    await createCase('mixed', { name: 'm-pass-2', inputData: { n: 2 }, expectedOutputSchema: schema });
    await createCase('mixed', { name: 'm-fail', inputData: { n: 11 }, expectedOutputSchema: schema });
    await createCase('mixed', { name: 'm-error', inputData: { mode: 'boom' }, expectedOutputSchema: schema });
    const batch = await system()('POST', '/api/v1/test-runs/batch', { processId: mixed });
    expect(batch.body.total).toBe(4);
    const stats = await user()('GET', `/api/v1/test-runs/stats?processId=${mixed}`);
    expect(stats.status).toBe(200);
    expect(stats.body).toEqual({
      total: 4,
      passed: 2,
      failed: 1,
      error: 1,
      timeout: 0,
      passRate: 0.5,
      averageDuration: expect.any(Number),
    });
    const orgStats = await user()('GET', '/api/v1/test-runs/stats');
    expect(orgStats.body.timeout).toBeGreaterThanOrEqual(1);
    const failedOnly = await user()('GET', `/api/v1/test-runs/?processId=${mixed}&status=failed`);
    expect(failedOnly.body).toMatchObject({ total: 1, page: 1, pageSize: 20 });
    expect(failedOnly.body.items[0].testCaseName).toBe('m-fail');
    const paged = await user()('GET', `/api/v1/test-runs?processId=${mixed}&pageSize=3&page=2`);
    expect(paged.body).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect(paged.body.items).toHaveLength(1);
    const newestFirst = await user()('GET', `/api/v1/test-runs?processId=${mixed}`);
    const started = newestFirst.body.items.map((item: { startedAt: string }) => item.startedAt);
    expect([...started].sort().reverse()).toEqual(started);
    expect((await user()('GET', '/api/v1/test-runs?status=nope')).status).toBe(400);
  });

  test('a running batch shows how many runs are done', async () => {
    for (const name of ['p-1', 'p-2', 'p-3']) await createCase('gated', { name });
    const started = await system()('POST', '/api/v1/test-runs/batch?waitSeconds=0', { processId: processes.gated });
    expect(started.status).toBe(202);
    const batchPath = `/api/v1/test-runs/batches/${started.body.id}`;
    // The gated server holds each call until released: the runs go in sequence, one call each.
    const first = await readUntil(
      () => system()(`GET`, batchPath),
      () => gated.requests === 1,
    );
    expect(first.body).toMatchObject({ status: 'running', total: 3, done: 0 });
    gated.releaseOne();
    await readUntil(
      async () => gated.requests,
      (count) => count === 2,
    );
    const second = await system()('GET', batchPath);
    expect(second.body).toMatchObject({ status: 'running', total: 3, done: 1 });
    expect(second.body.runs.filter((item: { status: string }) => item.status === 'passed')).toHaveLength(1);
    gated.release();
    const finished = await readUntil(
      () => system()('GET', batchPath),
      (answer) => answer.body.status === 'completed',
    );
    expect(finished.body).toMatchObject({ done: 3, total: 3, stats: { total: 3, passed: 3, passRate: 1 } });
  });
});
