import { createBlobStorage, type BlobStorage } from '@weft/blob-storage';
import { loadConfig } from '@weft/config';
import { catalogHttp, engineHttp, type ExecutionRecord } from '@weft/contracts';
import { addModel } from '../src/bench/tiny-onnx-model.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { startFakeLlm, type FakeLlm } from './support/fake-llm-server.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/**
 * schematizationNode and mlModelNode through the engine: the data blocks come from the real
 * catalog over the bus, the llm connection is sealed by the catalog, the ONNX model is a blob of
 * the organization, and the local server speaks the OpenAI wire format.
 */
describe.each(modes)('model nodes through POST /processes/test (%s)', (mode) => {
  let harness: EngineHarness;
  let llm: FakeLlm;
  let blobs: BlobStorage;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  const modelKey = `${org}/models/${crypto.randomUUID()}/add.onnx`;
  let schemaId: string;
  let connectionId: string;

  beforeAll(async () => {
    llm = await startFakeLlm((body) =>
      body.messages[0]?.role === 'system'
        ? '{"customer":{"name":"Ada"}}'
        : `Sum received: ${body.messages.at(-1)?.content ?? ''}`,
    );
    harness = await startEngineHarness(mode);
    blobs = createBlobStorage(loadConfig({}));
    await blobs.put(modelKey, Buffer.from(addModel()), 'application/octet-stream', { name: 'add.onnx' });
    const schema = await harness.bus.request(
      catalogHttp.createSchema,
      {
        params: { org_id: org },
        query: {},
        headers: {},
        body: {
          name: 'Invoices',
          dataBlocks: [
            {
              name: 'invoice',
              jsonSchema: {
                type: 'object',
                properties: { number: { type: 'string' }, amounts: { type: 'array', items: { type: 'number' } } },
                required: ['number', 'amounts'],
              },
            },
            { name: 'customer', jsonSchema: { type: 'object', required: ['name'] } },
          ],
        },
      },
      { actor },
    );
    schemaId = (schema.body as { id: string }).id;
    connectionId = (
      await harness.catalog.addConnection({
        organizationId: org,
        type: 'llm',
        name: 'local model server',
        data: { baseUrl: llm.baseUrl, apiKey: 'sk-test', model: 'local-1' },
      })
    ).id;
  });
  afterAll(async () => {
    await harness.close();
    await blobs.delete(modelKey);
    await blobs.close();
    await llm.close();
  });

  const run = async (graph: GraphBuilder, body: unknown, query: Record<string, string> = {}) => {
    const process = await harness.catalog.add(graph.process({ organization_id: org }));
    return harness.call(engineHttp.testProcess, { params: { processId: process.id }, query, body }, actor);
  };

  test('mapping -> onnx -> openai chat: each node documented output, blocks on their handles', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Extract', 'schematizationNode', {
        schemaId,
        selectedDataBlocks: ['invoice'],
        mode: 'mapping',
        mappings: { invoice: '{ "number": In.ref, "amounts": In.lines.amount }' },
      })
      .node('Add', 'mlModelNode', {
        provider: 'onnx',
        model: `weft-blob://${modelKey.split('/').map(encodeURIComponent).join('/')}`,
        inputs: {
          // The invoice handle carries the invoice block: input["Extract"] is that block.
          a: { data: '{{input["Extract"]["amounts"]}}', dims: [2] },
          b: { data: [100, 200], dims: [2] },
        },
      })
      .node('Chat', 'mlModelNode', {
        provider: 'openai',
        connectionId,
        operation: 'chat',
        messages: [{ role: 'user', content: '{{input["Add"]["outputs"]["sum"]["data"]}}' }],
      })
      .node('Out', 'outputNode', { returnToClient: true })
      .edge('In', 'Extract')
      .edge('Extract', 'Add', 'invoice')
      .edge('Add', 'Chat')
      .edge('Chat', 'Out');
    const reply = await run(g, { ref: 'INV-1', lines: [{ amount: 1 }, { amount: 2 }] });
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', error_message: null });
    const output = (label: string) => record.node_states.find((state) => state.node_name === label)?.output_data;
    expect(output('Extract')).toEqual({ invoice: { number: 'INV-1', amounts: [1, 2] } });
    // The read model rebuilds the input from the handle the edge leaves: the block, not the whole output.
    expect(record.node_states.find((state) => state.node_name === 'Add')?.input_data).toMatchObject({
      Extract: { number: 'INV-1', amounts: [1, 2] },
    });
    expect(output('Add')).toEqual({ outputs: { sum: { data: [101, 202], dims: [2] } } });
    expect(output('Chat')).toEqual({
      text: 'Sum received: [101,202]',
      json: null,
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    const tokens = { model: 'local-1', calls: 1, prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    expect(record.node_states.find((state) => state.node_name === 'Chat')?.token_usage).toEqual(tokens);
    expect(record.node_states.find((state) => state.node_name === 'Add')).not.toHaveProperty('token_usage');
  });

  test('llm schematization through the catalog connection; usage in the node state', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Extract', 'schematizationNode', {
        schemaId,
        selectedDataBlocks: ['customer'],
        mode: 'llm',
        connectionId,
        source: '{{input["In"]["body"]}}',
      })
      .node('Out', 'outputNode', { returnToClient: true, fields: { name: '{{input["Extract"]["name"]}}' } })
      .edge('In', 'Extract')
      .edge('Extract', 'Out', 'customer');
    const record = (await run(g, { body: 'Hello, this is Ada.' })).body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', output_data: { Out: { name: 'Ada' } } });
    expect(record.node_states.find((state) => state.node_name === 'Extract')?.output_data).toEqual({
      customer: { name: 'Ada' },
    });
    expect(record.node_states.find((state) => state.node_name === 'Extract')?.token_usage).toEqual({
      model: 'local-1',
      calls: 1,
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
    });
  });

  test("an unknown data block and another organization's model fail the node naming the cause", async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Add', 'mlModelNode', {
        provider: 'onnx',
        model: `${crypto.randomUUID()}/models/add.onnx`,
        inputs: { a: { data: [1], dims: [1] }, b: { data: [1], dims: [1] } },
      })
      .node('Out', 'outputNode')
      .edge('In', 'Add')
      .edge('Add', 'Out');
    const record = (await run(g, {})).body as ExecutionRecord;
    expect(record.status).toBe('failed');
    expect(record.error_message).toMatch(/^Add: model file ".+\/models\/add.onnx" not found$/);
  });

  test('cancelling an execution stops the model call in flight', async () => {
    const hanging = await harness.catalog.addConnection({
      organizationId: org,
      type: 'llm',
      name: 'hanging server',
      data: { baseUrl: `${llm.url}/hang/v1`, apiKey: 'sk-test', model: 'local-1' },
    });
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Chat', 'mlModelNode', {
        provider: 'openai',
        connectionId: hanging.id,
        operation: 'embeddings',
        input: 'x',
      })
      .node('Out', 'outputNode')
      .edge('In', 'Chat')
      .edge('Chat', 'Out');
    const closedBefore = llm.closed;
    const accepted = await run(g, {}, { waitSeconds: '0' });
    expect(accepted.status).toBe(202);
    const { execution_id } = accepted.body as { execution_id: string };
    await waitUntil(() => llm.requests.some((request) => request.url === '/hang/v1/embeddings'));
    const cancelled = await harness.call(engineHttp.cancelExecution, { params: { id: execution_id } }, actor);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    await waitUntil(() => llm.closed > closedBefore);
  });
});
