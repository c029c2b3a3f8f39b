import type { DecryptedConnection } from '@weft/contracts';
import type { DataBlockSchemas } from '../src/adapters/nodes/data-block-schemas.js';
import { JsonataMappings } from '../src/adapters/nodes/jsonata-mapping.js';
import { createNodePalette, type NodePalette } from '../src/adapters/nodes/node-palette.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startFakeLlm, type FakeLlm } from './support/fake-llm-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';
import { waitUntil } from './support/wait-until.js';

/** Node-level behaviour with the data blocks given in memory; engine-schematization.int.spec.ts runs it through the real catalog. */
const blocks: Record<string, unknown> = {
  invoice: {
    type: 'object',
    properties: { number: { type: 'string' }, total: { type: 'number' } },
    required: ['number', 'total'],
    additionalProperties: false,
  },
  customer: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] },
};
const dataBlocks: DataBlockSchemas = {
  blocksOf: async (_org, schemaId, names) => {
    if (schemaId !== 'schema-1') throw Object.assign(new Error('not found'), { status: 404 });
    return names.filter((name) => name in blocks).map((name) => ({ name, jsonSchema: blocks[name] }));
  },
};

describe('schematizationNode', () => {
  let llm: FakeLlm;
  let palette: NodePalette;
  let answers: string[] = [];
  beforeAll(async () => {
    llm = await startFakeLlm((_body, index) => answers[Math.min(index, answers.length - 1)] ?? '{}');
    palette = createNodePalette({ dataBlocks, models: { jsonataMaxMemoryMb: 64 } });
  });
  afterAll(async () => {
    await palette.close();
    await llm.close();
  });
  beforeEach(() => {
    llm.requests.length = 0;
  });

  const connection = (baseUrl: string): DecryptedConnection => ({
    id: 'llm-1',
    organizationId: 'org',
    type: 'llm',
    name: 'local llm',
    data: { baseUrl, apiKey: 'sk-test', model: 'extractor' },
  });

  const run = async (
    config: Record<string, unknown>,
    data: unknown,
    options: { signal?: AbortSignal; executors?: NodePalette['executors']; baseUrl?: string } = {},
  ) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Extract', 'schematizationNode', { schemaId: 'schema-1', ...config })
      .edge('In', 'Extract');
    return runInMemory(g.snapshot(), g.id('In'), data, {
      executors: pureExecutors((options.executors ?? palette.executors).get('schematizationNode')!),
      connections: { 'llm-1': connection(options.baseUrl ?? llm.baseUrl) },
      signal: options.signal,
    });
  };

  const mapping = {
    mode: 'mapping',
    selectedDataBlocks: ['invoice', 'customer'],
    mappings: {
      invoice: '{ "number": In.ref, "total": $sum(In.lines.amount) }',
      customer: '{ "name": $trim(In.from) }',
    },
  };
  const email = { ref: 'INV-7', lines: [{ amount: 10 }, { amount: 2.5 }], from: '  Ada Lovelace ' };

  test('mapping: one JSONata expression per block over the input; one handle per block', async () => {
    const { outcome, listener } = await run(mapping, email);
    expect(outcome.status).toBe('completed');
    expect(listener.output('Extract')).toEqual({
      invoice: { number: 'INV-7', total: 12.5 },
      customer: { name: 'Ada Lovelace' },
    });
    expect(listener.steps.find((s) => s.step === 'completed' && s.label === 'Extract')?.handles).toEqual([
      'invoice',
      'customer',
    ]);
  });

  test('mapping: the node fails listing every violation of every block', async () => {
    const { outcome } = await run(mapping, { ref: 7, lines: [], from: '' });
    expect(outcome).toMatchObject({
      status: 'failed',
      error:
        'data blocks do not match their schemas: "invoice" / must have required property \'total\'; "invoice" /number must be string; "customer" /name must NOT have fewer than 1 characters',
    });
  });

  test('mapping: a syntax error, an unknown schema and an unknown block name the cause', async () => {
    const syntax = await run({ ...mapping, mappings: { ...mapping.mappings, invoice: '{ "a": ' } }, email);
    expect((syntax.outcome as { error: string }).error).toMatch(/^mapping of "invoice": invalid JSONata: .+ \(S\d+/);
    const schema = await run({ ...mapping, schemaId: 'nope' }, email);
    expect(schema.outcome).toMatchObject({ status: 'failed', error: 'schema nope not found' });
    const block = await run({ ...mapping, selectedDataBlocks: ['invoice', 'receipt'] }, email);
    expect(block.outcome).toMatchObject({ status: 'failed', error: 'schema schema-1 has no data block "receipt"' });
  });

  test('mapping: a runaway expression stops at timeoutMs', async () => {
    const { outcome } = await run(
      { ...mapping, timeoutMs: 50, mappings: { ...mapping.mappings, invoice: '$sum([1..1000000].($ * 2))' } },
      email,
    );
    expect(outcome).toMatchObject({ status: 'failed', error: 'mapping of "invoice": timed out after 50 ms' });
  });

  test('mapping: one step that builds a huge array fails at the memory limit; the engine heap stays small and mappings go on', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const { outcome } = await run(
      { ...mapping, timeoutMs: 120_000, mappings: { ...mapping.mappings, invoice: '[1..10000000].{"a": $}' } },
      email,
    );
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'mapping of "invoice": exceeded the memory limit of 64 MB (WEFT_JSONATA_MAX_MEMORY_MB)',
    });
    // The array lived in the worker's heap, never in this one.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
    const after = await run(mapping, email);
    expect(after.outcome.status).toBe('completed');
  });

  test('mapping: the engine goes on while a mapping runs, and a cancel stops it', async () => {
    const controller = new AbortController();
    const running = run(
      { ...mapping, timeoutMs: 5_000, mappings: { ...mapping.mappings, invoice: '$count([1..1000000].($ * 2))' } },
      email,
      { signal: controller.signal },
    );
    // This timer fires only if the evaluation leaves the engine's event loop free.
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort(new Error('cancelled by test'));
    const { outcome } = await running;
    expect(outcome).toMatchObject({ status: 'aborted' });
    const after = await run(mapping, email);
    expect(after.outcome.status).toBe('completed');
  });

  test('mapping: a cancel that lands while the JSONata process starts stops the mapping', async () => {
    const cold = new JsonataMappings({ workers: 1, maxMemoryMb: 128 });
    try {
      const controller = new AbortController();
      const running = cold.evaluate('mapping of "x"', '1 + 1', {}, 5000, controller.signal, 'org');
      controller.abort(new Error('cancelled while starting'));
      await expect(running).rejects.toThrow('cancelled while starting');
      // The slot was given back: the next mapping runs.
      expect(await cold.evaluate('mapping of "y"', '2 + 2', {}, 5000, new AbortController().signal, 'org')).toBe(4);
    } finally {
      await cold.close();
    }
  });

  test('mapping: without JSONata installed the node fails saying what to install', async () => {
    const missing = createNodePalette({
      dataBlocks,
      runtimes: { jsonataModule: 'jsonata-not-installed' },
    });
    try {
      const { outcome } = await run(mapping, email, { executors: missing.executors });
      expect(outcome).toMatchObject({
        status: 'failed',
        error: 'JSONata is not available on this engine: install jsonata (pnpm add jsonata)',
      });
    } finally {
      await missing.close();
    }
  });

  const llmConfig = {
    mode: 'llm',
    selectedDataBlocks: ['invoice', 'customer'],
    connectionId: 'llm-1',
    source: 'Invoice {{input["In"]["ref"]}} from Ada, total 12.50',
    instructions: 'Amounts are in euros.',
  };

  test('llm: validation errors are fed back until the answer fits; token usage is summed', async () => {
    answers = [
      '{"invoice":{"number":"INV-7","total":"12.50"},"customer":{"name":"Ada"}}',
      '{"invoice":{"number":"INV-7","total":12.5},"customer":{"name":"Ada"}}',
    ];
    const { outcome, listener } = await run(llmConfig, { ref: 'INV-7' });
    expect(outcome.status).toBe('completed');
    expect(listener.output('Extract')).toEqual({
      invoice: { number: 'INV-7', total: 12.5 },
      customer: { name: 'Ada' },
    });
    expect(listener.completed('Extract')?.tokenUsage).toEqual({
      model: 'extractor',
      calls: 2,
      prompt_tokens: 20,
      completion_tokens: 10,
      total_tokens: 30,
    });
    const [first, second] = llm.chatBodies();
    expect(first!.messages[1]).toEqual({ role: 'user', content: 'Invoice INV-7 from Ada, total 12.50' });
    expect(first!.messages[0]!.content).toContain('Amounts are in euros.');
    expect(first!.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { schema: { properties: blocks, required: ['invoice', 'customer'] } },
    });
    expect(second!.messages.at(-1)!.content).toContain('- "invoice" /total must be number');
  });

  test('llm: after maxRepairs the node fails with every remaining violation', async () => {
    answers = ['{"invoice":{"number":1},"customer":{}}'];
    const { outcome } = await run({ ...llmConfig, maxRepairs: 1 }, { ref: 'INV-7' });
    expect(outcome).toMatchObject({
      status: 'failed',
      error:
        'the model could not fill the data blocks after 2 attempts (30 tokens): "invoice" / must have required property \'total\'; "invoice" /number must be string; "customer" / must have required property \'name\'',
    });
    expect(llm.chatBodies()).toHaveLength(2);
  });

  test.each([
    [
      'credentials in the URL',
      'http://user:sk-in-url@127.0.0.1:9/v1',
      'has credentials in its baseUrl: put the key in apiKey instead',
    ],
    ['a URL that does not parse', 'http://user:sk-in-url@[::1/v1', 'has a baseUrl that is not a URL'],
    [
      'a key in its query',
      'http://127.0.0.1:9/v1?api-key=sk-in-url',
      'has a query or fragment in its baseUrl: give the API root only, and the key in apiKey',
    ],
    [
      'a key in its fragment',
      'http://127.0.0.1:9/v1#sk-in-url',
      'has a query or fragment in its baseUrl: give the API root only, and the key in apiKey',
    ],
    ['another scheme', 'ftp://user:sk-in-url@127.0.0.1/v1', 'has a baseUrl of scheme ftp:, not http or https'],
  ])('llm: a baseUrl with %s fails the node without quoting it', async (_case, baseUrl, message) => {
    const before = llm.requests.length;
    const { outcome } = await run(llmConfig, {}, { baseUrl });
    expect(outcome).toMatchObject({ status: 'failed', error: `llm connection "local llm" ${message}` });
    expect(JSON.stringify(outcome)).not.toContain('sk-in-url');
    expect(llm.requests.length).toBe(before);
  });

  test('llm: timeoutMs fails the node; a cancel aborts the call in flight', async () => {
    const hang = `${llm.url}/hang/v1`;
    const timedOut = await run({ ...llmConfig, timeoutMs: 100 }, {}, { baseUrl: hang });
    expect(timedOut.outcome).toMatchObject({
      status: 'failed',
      error: `POST ${hang}/chat/completions timed out after 100 ms`,
    });
    const controller = new AbortController();
    const closedBefore = llm.closed;
    const running = run(llmConfig, {}, { baseUrl: hang, signal: controller.signal });
    await waitUntil(() => llm.requests.length > 1);
    controller.abort(new Error('cancelled'));
    expect((await running).outcome.status).toBe('aborted');
    await waitUntil(() => llm.closed > closedBefore);
  });
});
