import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addModel } from '../../engine/src/bench/tiny-onnx-model.js';
import { client } from './weft-harness.js';
import {
  DEPLOYMENT_START_TIMEOUT_MS,
  SLOW_RUN_TEST_TIMEOUT_MS,
  SLOW_RUN_WAIT_SECONDS,
  deploymentKind,
  type Deployment,
} from './support/deployment.js';
import { useSharedDeployment } from './support/shared-deployment.js';

/**
 * schematizationNode and mlModelNode as a user runs them over HTTP, in both modes: a schema with
 * data blocks, an llm connection to a loopback server speaking the OpenAI wire format, an ONNX
 * model built by the test, lint of a bad config, and POST /processes/test.
 */
describe(`model nodes over HTTP (${deploymentKind()})`, () => {
  let under: Deployment;
  let llm: Server;
  let org: { id: string; key: string };
  let schemaId: string;
  let connectionId: string;
  const as = (key: string) => client(under.baseUrl, key);
  const onnxModel = `data:application/octet-stream;base64,${Buffer.from(addModel()).toString('base64')}`;

  beforeAll(async () => {
    llm = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { messages: { role: string; content: string }[] };
        const extraction = body.messages[0]?.role === 'system';
        res.writeHead(req.headers.authorization === 'Bearer sk-e2e' ? 200 : 401, {
          'content-type': 'application/json',
        });
        res.end(
          JSON.stringify({
            choices: [
              {
                message: {
                  role: 'assistant',
                  content: extraction ? '{"customer":{"name":"Ada"}}' : `echo: ${body.messages.at(-1)?.content}`,
                },
              },
            ],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => llm.listen(0, '127.0.0.1', resolve));
    under = await useSharedDeployment();
    const system = as(under.key);
    const created = await system('POST', '/api/v1/organizations', { name: 'Models Inc' });
    const issued = await system('POST', `/api/v1/api-keys/by-org/${created.body.id}`, {
      name: 'user',
      userName: 'Model user',
      userId: randomUUID(),
    });
    org = { id: created.body.id as string, key: issued.body.key as string };
    const user = as(org.key);
    const schema = await user('POST', `/api/v1/schemas/by-org/${org.id}`, {
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
    });
    expect(schema.status).toBe(201);
    schemaId = schema.body.id as string;
    const connection = await user('POST', `/api/v1/connections/by-org/${org.id}`, {
      type: 'llm',
      name: 'loopback model server',
      data: { baseUrl: `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`, apiKey: 'sk-e2e', model: 'm-1' },
    });
    expect(connection.status).toBe(201);
    connectionId = connection.body.id as string;
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await under?.stop();
    await new Promise((resolve) => llm?.close(resolve));
  });

  const createProcess = async (
    nodes: { id: string; type: string; config: Record<string, unknown> }[],
    edges: unknown[],
  ) => {
    const created = await as(org.key)('POST', `/api/v1/processes/by-org/${org.id}`, {
      name: randomUUID(),
      nodes,
      edges,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  test('the llm connection is stored without returning its key', async () => {
    const read = await as(org.key)('GET', `/api/v1/connections/by-id/${connectionId}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain('sk-e2e');
  });

  test(
    'mapping -> onnx -> openai chat runs end to end through POST /processes/test',
    async () => {
      const id = await createProcess(
        [
          { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
          {
            id: 'extract',
            type: 'schematizationNode',
            config: {
              label: 'Extract',
              schemaId,
              selectedDataBlocks: ['invoice'],
              mode: 'mapping',
              mappings: { invoice: '{ "number": In.ref, "amounts": In.lines.amount }' },
            },
          },
          {
            id: 'add',
            type: 'mlModelNode',
            config: {
              label: 'Add',
              provider: 'onnx',
              model: onnxModel,
              inputs: {
                a: { data: '{{input["Extract"]["amounts"]}}', dims: [2] },
                b: { data: [0.5, 0.5], dims: [2] },
              },
            },
          },
          {
            id: 'chat',
            type: 'mlModelNode',
            config: {
              label: 'Chat',
              provider: 'openai',
              connectionId,
              operation: 'chat',
              messages: [{ role: 'user', content: 'sum {{input["Add"]["outputs"]["sum"]["data"]}}' }],
            },
          },
          {
            id: 'out',
            type: 'outputNode',
            config: { label: 'Out', returnToClient: true, fields: { reply: '{{input["Chat"]["text"]}}' } },
          },
        ],
        [
          { source_node_id: 'in', target_node_id: 'extract' },
          { source_node_id: 'extract', target_node_id: 'add', source_handle: 'invoice' },
          { source_node_id: 'add', target_node_id: 'chat' },
          { source_node_id: 'chat', target_node_id: 'out' },
        ],
      );
      const lint = await as(org.key)('POST', `/api/v1/processes/${id}/lint`);
      expect(lint.body).toMatchObject({ valid: true });
      const run = await as(org.key)('POST', `/api/v1/processes/test/${id}?waitSeconds=${SLOW_RUN_WAIT_SECONDS}`, {
        ref: 'INV-9',
        lines: [{ amount: 1 }, { amount: 2 }],
      });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ status: 'completed', output_data: { Out: { reply: 'echo: sum [1.5,2.5]' } } });
      const states = run.body.node_states as { node_name: string; output_data: unknown }[];
      expect(states.find((state) => state.node_name === 'Add')?.output_data).toEqual({
        outputs: { sum: { data: [1.5, 2.5], dims: [2] } },
      });
    },
    SLOW_RUN_TEST_TIMEOUT_MS,
  );

  test(
    'llm schematization runs through POST /processes/test; a bad config is a lint finding',
    async () => {
      const id = await createProcess(
        [
          { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
          {
            id: 'extract',
            type: 'schematizationNode',
            config: {
              label: 'Extract',
              schemaId,
              selectedDataBlocks: ['customer'],
              mode: 'llm',
              connectionId,
              source: '{{input["In"]["text"]}}',
            },
          },
          { id: 'out', type: 'outputNode', config: { label: 'Out', returnToClient: true } },
        ],
        [
          { source_node_id: 'in', target_node_id: 'extract' },
          { source_node_id: 'extract', target_node_id: 'out', source_handle: 'customer' },
        ],
      );
      const run = await as(org.key)('POST', `/api/v1/processes/test/${id}?waitSeconds=${SLOW_RUN_WAIT_SECONDS}`, {
        text: 'Regards, Ada',
      });
      expect(run.body).toMatchObject({ status: 'completed' });
      const states = run.body.node_states as { node_name: string; output_data: unknown; token_usage?: unknown }[];
      const extract = states.find((state) => state.node_name === 'Extract');
      expect(extract?.output_data).toEqual({ customer: { name: 'Ada' } });
      expect(extract?.token_usage).toEqual({
        model: 'm-1',
        calls: 1,
        prompt_tokens: 3,
        completion_tokens: 2,
        total_tokens: 5,
      });
      // The customer handle carries the customer block to Out.
      expect(states.find((state) => state.node_name === 'Out')?.output_data).toMatchObject({
        Extract: { name: 'Ada' },
      });

      const bad = await createProcess(
        [
          { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
          {
            id: 'extract',
            type: 'schematizationNode',
            config: {
              label: 'Extract',
              schemaId,
              selectedDataBlocks: ['customer', 'invoice'],
              mode: 'mapping',
              mappings: { customer: 'In' },
            },
          },
          { id: 'out', type: 'outputNode', config: { label: 'Out' } },
        ],
        [
          { source_node_id: 'in', target_node_id: 'extract' },
          { source_node_id: 'extract', target_node_id: 'out', source_handle: 'customer' },
        ],
      );
      const lint = await as(org.key)('POST', `/api/v1/processes/${bad}/lint`);
      expect(lint.body.valid).toBe(false);
      expect(JSON.stringify(lint.body.findings)).toContain('data block \\"invoice\\" has no mapping');
    },
    SLOW_RUN_TEST_TIMEOUT_MS,
  );
});
