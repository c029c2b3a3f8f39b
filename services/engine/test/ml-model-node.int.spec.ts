import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DecryptedConnection } from '@weft/contracts';
import {
  addModel,
  externalDataModel,
  onnxWire,
  tinyOnnxModel,
  trainingInfoModel,
} from '../src/bench/tiny-onnx-model.js';
import { createNodePalette, type NodePalette } from '../src/adapters/nodes/node-palette.js';
import { MAX_RETIRED_WORKERS, OnnxModels } from '../src/adapters/nodes/onnx-models.js';
import type { TensorInput } from '../src/adapters/nodes/onnx-tensors.js';
import type { NodeRunContext } from '../src/domain/nodes/node-executor.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { startFakeLlm, type FakeLlm } from './support/fake-llm-server.js';
import { json, startLocalHttpServer } from './support/local-http-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';
import { waitUntil } from './support/wait-until.js';

const dataUrl = (model: Uint8Array): string =>
  `data:application/octet-stream;base64,${Buffer.from(model).toString('base64')}`;
const modelUrl = dataUrl(addModel());

/**
 * `c = a·a·…·a` (`depth` MatMuls of `a`, n x n): a run that computes for a while (n 600, depth 100:
 * about 200 ms on two cores) from a small input.
 */
const matMulChain = (n: number, depth: number): Uint8Array => {
  const { fieldBytes, fieldVarint, tensorInfo } = onnxWire;
  const nodes: number[] = [];
  for (let i = 1; i <= depth; i++) {
    const node = [
      ...fieldBytes(1, i === 1 ? 'a' : `t${i - 1}`),
      ...fieldBytes(1, 'a'),
      ...fieldBytes(2, i === depth ? 'c' : `t${i}`),
      ...fieldBytes(4, 'MatMul'),
    ];
    nodes.push(...fieldBytes(1, node));
  }
  const graph = [
    ...nodes,
    ...fieldBytes(2, 'chain'),
    ...fieldBytes(11, tensorInfo('a', [n, n])),
    ...fieldBytes(12, tensorInfo('c', [n, n])),
  ];
  return Uint8Array.from([...fieldVarint(1, 8), ...fieldBytes(7, graph), ...fieldBytes(8, fieldVarint(2, 13))]);
};
const identity = (n: number): number[] => Array.from({ length: n * n }, (_, index) => (index % (n + 1) === 0 ? 1 : 0));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('mlModelNode', () => {
  let llm: FakeLlm;
  let palette: NodePalette;
  beforeAll(async () => {
    llm = await startFakeLlm((body) =>
      body.messages.some((m) => m.content.includes('as JSON')) ? '{"sentiment":"positive","score":0.9}' : 'Hello!',
    );
    palette = createNodePalette();
  });
  afterAll(async () => {
    await palette.close();
    await llm.close();
  });

  const connection = (baseUrl: string): DecryptedConnection => ({
    id: 'llm-1',
    organizationId: 'org',
    type: 'llm',
    name: 'local llm',
    data: { baseUrl, apiKey: 'sk-test', model: 'tiny-chat' },
  });

  const run = async (
    config: Record<string, unknown>,
    data: unknown = {},
    options: { signal?: AbortSignal; executors?: NodePalette['executors']; baseUrl?: string } = {},
  ) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Model', 'mlModelNode', config)
      .edge('In', 'Model');
    const executors = options.executors ?? palette.executors;
    return runInMemory(g.snapshot(), g.id('In'), data, {
      executors: pureExecutors(executors.get('mlModelNode')!),
      connections: { 'llm-1': connection(options.baseUrl ?? llm.baseUrl) },
      signal: options.signal,
    });
  };

  test('onnx: runs a model built at test time on templated inputs and returns named output tensors', async () => {
    const { outcome, listener } = await run(
      {
        provider: 'onnx',
        model: modelUrl,
        inputs: {
          a: { data: '{{input["In"]["a"]}}', dims: [3] },
          b: { data: [[10], [20], [30]], dims: [3], type: 'float32' },
        },
      },
      { a: [1, 2, 3.5] },
    );
    expect(outcome.status).toBe('completed');
    expect(listener.output('Model')).toEqual({ outputs: { sum: { data: [11, 22, 33.5], dims: [3] } } });
  });

  test('onnx: the model is loaded once per engine and reused by later runs', async () => {
    const fresh = createNodePalette();
    try {
      for (const a of [1, 2, 3]) {
        const { outcome } = await run(
          { provider: 'onnx', model: modelUrl, inputs: { a: { data: [a], dims: [1] }, b: { data: [1], dims: [1] } } },
          {},
          { executors: fresh.executors },
        );
        expect(outcome.status).toBe('completed');
      }
      expect(fresh.cachedOnnxModels()).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  test('onnx: a model from a URL (auth from an http connection) is downloaded once per organization and engine', async () => {
    const server = await startLocalHttpServer((request, res) => {
      if (request.headers.authorization !== 'Bearer model-token') return json(res, 401, {});
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from(addModel()));
    });
    const fresh = createNodePalette();
    const executor = fresh.executors.get('mlModelNode')!;
    const models: DecryptedConnection = {
      id: 'models',
      organizationId: 'org',
      type: 'http',
      name: 'model store',
      data: { authType: 'bearer', token: 'model-token' },
    };
    const contextOf = (organizationId: string) =>
      ({
        organizationId,
        signal: new AbortController().signal,
        connection: async () => models,
      }) as unknown as NodeRunContext;
    const config = (a: number) => ({
      label: 'Model',
      provider: 'onnx',
      model: `${server.url}/models/add.onnx`,
      connectionId: 'models',
      inputs: { a: { data: [a], dims: [1] }, b: { data: [10], dims: [1] } },
    });
    try {
      for (const [a, org] of [
        [1, 'org-a'],
        [2, 'org-a'],
        [3, 'org-b'],
      ] as const) {
        const result = await executor.execute(config(a), {}, contextOf(org));
        expect(result.output).toEqual({ outputs: { sum: { data: [a + 10], dims: [1] } } });
      }
      // Another organization fetches with its own credentials; the same bytes share one loaded model.
      expect(server.requests).toHaveLength(2);
      expect(fresh.cachedOnnxModels()).toBe(1);
      const refused = await executor
        .execute({ ...config(1), model: `${server.url}/other.onnx`, connectionId: undefined }, {}, contextOf('org-c'))
        .catch((error: Error) => error.message);
      expect(refused).toBe(`GET ${server.url}/other.onnx (the model) answered 401`);
    } finally {
      await fresh.close();
      await server.close();
    }
  });

  test('onnx: wrong dims, unknown inputs and a model that is not ONNX fail the node with the cause', async () => {
    const badDims = await run({
      provider: 'onnx',
      model: modelUrl,
      inputs: { a: { data: [1, 2], dims: [3] }, b: { data: [1, 2, 3], dims: [3] } },
    });
    expect(badDims.outcome).toMatchObject({ status: 'failed', error: 'input "a": dims [3] need 3 values, data has 2' });
    const unknown = await run({
      provider: 'onnx',
      model: modelUrl,
      inputs: { a: { data: [1], dims: [1] }, b: { data: [1], dims: [1] }, c: { data: [1], dims: [1] } },
    });
    expect(unknown.outcome).toMatchObject({ status: 'failed', error: 'the model has no input "c" (its inputs: a, b)' });
    const garbage = await run({
      provider: 'onnx',
      model: `data:application/octet-stream;base64,${Buffer.from('not a model').toString('base64')}`,
      inputs: { a: { data: [1], dims: [1] } },
    });
    expect(garbage.outcome).toMatchObject({ status: 'failed' });
    expect((garbage.outcome as { error: string }).error).toMatch(/^the model could not be loaded: /);
    const foreign = await run({
      provider: 'onnx',
      model: 'other-org/models/m.onnx',
      inputs: { a: { data: [1], dims: [1] } },
    });
    expect(foreign.outcome).toMatchObject({
      status: 'failed',
      error: 'model file "other-org/models/m.onnx" not found',
    });
  });

  test("onnx: a model whose tensors name external files is refused before the runtime reads the engine's disk", async () => {
    // package.json sits in the working directory: the runtime would take its bytes as the weights.
    for (const nested of [false, true]) {
      const model = externalDataModel('package.json', { nested });
      const { outcome, listener } = await run({
        provider: 'onnx',
        model: `data:application/octet-stream;base64,${Buffer.from(model).toString('base64')}`,
        inputs: { a: { data: [0, 0, 0, 0], dims: [4] } },
      });
      expect(outcome).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('the model keeps tensor data in external files, which Weft does not load'),
      });
      expect(listener.output('Model')).toBeUndefined();
    }
  });

  test('onnx: a model the runtime would parse otherwise than the external-data check (a tag beyond 32 bits) is refused', async () => {
    // Field 2^29 + 7 is field 7 (the graph) to protobuf, which keeps a tag's low 32 bits.
    const model = Uint8Array.from([...addModel(), ...onnxWire.tag(7 + 2 ** 29, 2), ...onnxWire.varint(0)]);
    const { outcome } = await run({
      provider: 'onnx',
      model: dataUrl(model),
      inputs: { a: { data: [1], dims: [1] }, b: { data: [1], dims: [1] } },
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      error:
        'the model could not be loaded: the model has a protobuf field tag longer than 32 bits, which Weft refuses (not an ONNX protobuf)',
    });
  });

  test('onnx: a model with training info (initialization and algorithm graphs, binding maps) loads and runs', async () => {
    const { outcome, listener } = await run({
      provider: 'onnx',
      model: dataUrl(trainingInfoModel()),
      inputs: { a: { data: [1, 2, 3, 4], dims: [4] } },
    });
    expect(outcome.status).toBe('completed');
    expect(listener.output('Model')).toEqual({ outputs: { sum: { data: [2, 3, 4, 5], dims: [4] } } });
  });

  test('onnx: a worker that crashes after it started fails its runs; the next load starts a new worker', async () => {
    // A stand-in runtime whose inference throws in the worker outside any promise (as an
    // out-of-memory end of the thread would): the worker dies with the run in flight.
    const dir = mkdtempSync(join(tmpdir(), 'weft-crashing-ort-'));
    const runtime = join(dir, 'crashing-runtime.cjs');
    writeFileSync(
      runtime,
      `exports.Tensor = class { constructor(type, data, dims) { Object.assign(this, { type, data, dims }); } };
exports.InferenceSession = { create: async () => ({
  inputNames: ['a', 'b'], outputNames: ['sum'], release: async () => {},
  run: () => { setTimeout(() => { throw new Error('the thread died'); }); return new Promise(() => {}); },
}) };`,
    );
    const models = new OnnxModels({
      maxModelBytes: 1024 * 1024,
      maxCachedModels: 4,
      maxOutputValues: 1000,
      runtimeModule: runtime,
    });
    try {
      const loaded = await models.load('org', modelUrl);
      const feeds: Record<string, TensorInput> = {
        a: { type: 'float32', data: [1], dims: [1] },
        b: { type: 'float32', data: [1], dims: [1] },
      };
      await expect(models.run(loaded, feeds)).rejects.toThrow('the ONNX worker stopped');
      // The engine goes on: timers fire, and the next load gets a new worker.
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await models.load('org', modelUrl)).outputNames).toEqual(['sum']);
    } finally {
      await models.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('onnx: a model evicted while it still loads in the worker has its session released, not leaked', async () => {
    const models = new OnnxModels({ maxModelBytes: 1024 * 1024, maxCachedModels: 1, maxOutputValues: 1000 });
    const mul = tinyOnnxModel({
      op: 'Mul',
      inputs: [
        { name: 'a', dims: ['n'] },
        { name: 'b', dims: ['n'] },
      ],
      output: { name: 'product', dims: ['n'] },
    });
    try {
      // Sent in this order before the worker answers any: load add; load mul, evicting add
      // (release add); load add again, evicting mul (release mul). Each release reaches the
      // worker while its model is still loading there, and the second load of add too.
      const [, , add] = await Promise.all([
        models.load('org', modelUrl),
        models.load('org', dataUrl(mul)),
        models.load('org', modelUrl),
      ]);
      expect(models.cachedModels).toBe(1);
      expect(await models.workerSessions()).toEqual({ keys: [add.key], live: 1 });
      expect(
        await models.run(add, {
          a: { type: 'float32', data: [1], dims: [1] },
          b: { type: 'float32', data: [2], dims: [1] },
        }),
      ).toEqual({
        sum: { data: [3], dims: [1] },
      });
    } finally {
      await models.close();
    }
  });

  test('onnx: a model evicted from the cache while it runs finishes its run; a later run loads it again', async () => {
    const single = createNodePalette({ models: { onnxMaxCachedModels: 1 } });
    const n = 600;
    const matMul = tinyOnnxModel({
      op: 'MatMul',
      inputs: [
        { name: 'a', dims: [n, n] },
        { name: 'b', dims: [n, n] },
      ],
      output: { name: 'c', dims: [n, n] },
    });
    const long = {
      provider: 'onnx',
      model: `data:application/octet-stream;base64,${Buffer.from(matMul).toString('base64')}`,
      inputs: { a: { data: '{{input["In"]["m"]}}', dims: [n, n] }, b: { data: '{{input["In"]["m"]}}', dims: [n, n] } },
    };
    const ones = Array.from({ length: n * n }, () => 1);
    const add = {
      provider: 'onnx',
      model: modelUrl,
      inputs: { a: { data: [1], dims: [1] }, b: { data: [2], dims: [1] } },
    };
    try {
      const running = run(long, { m: ones }, { executors: single.executors });
      await waitUntil(() => single.onnxWorker().runsInFlight === 1, 60_000, 1);
      // Another model takes the only cache place while the first one's inference runs.
      const other = await run(add, {}, { executors: single.executors });
      expect(other.outcome.status).toBe('completed');
      const first = await running;
      expect(first.outcome.status).toBe('completed');
      expect((first.listener.output('Model') as { outputs: { c: { data: number[] } } }).outputs.c.data[0]).toBe(n);
      const again = await run(long, { m: ones }, { executors: single.executors });
      expect(again.outcome.status).toBe('completed');
      expect(single.onnxWorker().stoppedWorkers).toBe(0);
    } finally {
      await single.close();
    }
  }, 120_000);

  test('onnx: a missing runtime fails the node saying what to install; other nodes are unaffected', async () => {
    const missing = createNodePalette({ runtimes: { onnxModule: 'onnxruntime-node-not-installed' } });
    try {
      const { outcome } = await run(
        { provider: 'onnx', model: modelUrl, inputs: { a: { data: [1], dims: [1] }, b: { data: [1], dims: [1] } } },
        {},
        { executors: missing.executors },
      );
      expect(outcome).toMatchObject({
        status: 'failed',
        error:
          'the ONNX runtime is not installed on this engine: install onnxruntime-node (ONNXRUNTIME_NODE_INSTALL=skip pnpm add onnxruntime-node; its CPU binaries ship in the package)',
      });
      const chat = await run(
        { provider: 'openai', connectionId: 'llm-1', operation: 'chat', messages: [{ role: 'user', content: 'hi' }] },
        {},
        { executors: missing.executors },
      );
      expect(chat.outcome.status).toBe('completed');
    } finally {
      await missing.close();
    }
  });

  test('onnx: a model whose outputs exceed WEFT_ONNX_MAX_OUTPUT_VALUES fails the node; the worker goes on', async () => {
    const capped = createNodePalette({ models: { onnxMaxOutputValues: 1_000_000 } });
    // A broadcast Add: 1,100 + 1,000 input values make 1,100,000 output values.
    const model = tinyOnnxModel({
      op: 'Add',
      inputs: [
        { name: 'a', dims: [1100, 1] },
        { name: 'b', dims: [1, 1000] },
      ],
      output: { name: 'c', dims: [1100, 1000] },
    });
    const config = {
      provider: 'onnx',
      model: `data:application/octet-stream;base64,${Buffer.from(model).toString('base64')}`,
      inputs: {
        a: { data: Array.from({ length: 1100 }, () => [1]), dims: [1100, 1] },
        b: { data: [Array.from({ length: 1000 }, () => 2)], dims: [1, 1000] },
      },
    };
    try {
      const huge = await run(config, {}, { executors: capped.executors });
      expect(huge.outcome).toMatchObject({
        status: 'failed',
        error: expect.stringContaining(
          'the model returned 1100000 values, more than the 1000000 an ONNX run may return (WEFT_ONNX_MAX_OUTPUT_VALUES)',
        ),
      });
      expect(capped.onnxWorker().stoppedWorkers).toBe(0);
    } finally {
      await capped.close();
    }
  }, 120_000);

  test('onnx: runs stopped while their inference computes reject at once; the process lives on and later runs work', async () => {
    // Ending a worker thread while onnxruntime-node computes in it aborts the process (exit 134):
    // this test process surviving is the main assertion.
    const models = new OnnxModels({ maxModelBytes: 1024 * 1024, maxCachedModels: 4, maxOutputValues: 1_000_000 });
    const n = 600;
    const chain = dataUrl(matMulChain(n, 100));
    const feeds: Record<string, TensorInput> = { a: { type: 'float32', data: identity(n), dims: [n, n] } };
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const model = await models.load('org', chain);
        const stop = new AbortController();
        const reason = new Error(`stopped ${attempt}`);
        const running = models.run(model, feeds, stop.signal);
        await sleep(30 + 7 * attempt);
        stop.abort(reason);
        await expect(running).rejects.toBe(reason);
        // Stops in a row retire a bounded number of workers, each left to finish its inference.
        expect(models.retiredWorkers).toBeLessThanOrEqual(MAX_RETIRED_WORKERS);
      }
      expect(models.stoppedWorkers).toBeGreaterThanOrEqual(1);
      expect(models.stoppedWorkers).toBeLessThan(5);
      const product = (await models.run(await models.load('org', chain), feeds)).c!;
      expect(product.dims).toEqual([n, n]);
      expect((product.data as number[]).reduce((sum, value) => sum + value, 0)).toBe(n);
      // A retired worker ends once its runs are answered.
      await waitUntil(() => models.retiredWorkers === 0 && models.runsInFlight === 0, 60_000);
    } finally {
      await models.close();
    }
  }, 120_000);

  test("onnx: another organization's run in the worker of a stopped run completes there with its output", async () => {
    const models = new OnnxModels({ maxModelBytes: 1024 * 1024, maxCachedModels: 4, maxOutputValues: 1_000_000 });
    const n = 600;
    const chain = dataUrl(matMulChain(n, 100));
    const feeds: Record<string, TensorInput> = { a: { type: 'float32', data: identity(n), dims: [n, n] } };
    try {
      const [forA, forB] = await Promise.all([models.load('org-a', chain), models.load('org-b', chain)]);
      const stop = new AbortController();
      const stopped = models.run(forA, feeds, stop.signal);
      const other = models.run(forB, feeds);
      await waitUntil(() => models.runsInFlight === 2, 60_000, 1);
      await sleep(30);
      stop.abort(new Error('cancelled'));
      await expect(stopped).rejects.toThrow('cancelled');
      expect(models.stoppedWorkers).toBe(1);
      // Answered by the retired worker, not failed to be retried in a new one.
      const product = (await other).c!;
      expect(product.dims).toEqual([n, n]);
      expect(product.data.slice(0, 3)).toEqual([1, 0, 0]);
      expect((product.data as number[]).reduce((sum, value) => sum + value, 0)).toBe(n);
      await waitUntil(() => models.retiredWorkers === 0, 60_000);
    } finally {
      await models.close();
    }
  }, 120_000);

  test("onnx: a cancelled or timed-out run fails its node at once; another execution's run in that worker completes", async () => {
    const fresh = createNodePalette();
    const n = 600;
    const config = {
      provider: 'onnx',
      model: dataUrl(matMulChain(n, 100)),
      inputs: { a: { data: '{{input["In"]["m"]}}', dims: [n, n] } },
    };
    try {
      const cancel = new AbortController();
      const cancelled = run(config, { m: identity(n) }, { executors: fresh.executors, signal: cancel.signal });
      const other = run(config, { m: identity(n) }, { executors: fresh.executors });
      await waitUntil(() => fresh.onnxWorker().runsInFlight === 2, 60_000, 1);
      cancel.abort(new Error('cancelled'));
      const [stopped, finished] = await Promise.all([cancelled, other]);
      expect(stopped.outcome.status).toBe('aborted');
      // The stopped run's worker was retired (left to finish), not ended under the inference.
      expect(fresh.onnxWorker().stoppedWorkers).toBe(1);
      expect(finished.outcome.status).toBe('completed');
      const product = (finished.listener.output('Model') as { outputs: { c: { data: number[]; dims: number[] } } })
        .outputs.c;
      expect(product.dims).toEqual([n, n]);
      expect(product.data.slice(0, 3)).toEqual([1, 0, 0]);
      expect(product.data.reduce((sum, value) => sum + value, 0)).toBe(n);
      const timedOut = await run({ ...config, timeoutMs: 40 }, { m: identity(n) }, { executors: fresh.executors });
      expect(timedOut.outcome).toMatchObject({ status: 'failed', error: 'the ONNX model timed out after 40 ms' });
      const again = await run(config, { m: identity(n) }, { executors: fresh.executors });
      expect(again.outcome.status).toBe('completed');
    } finally {
      await fresh.close();
    }
  }, 120_000);

  test('openai chat: templated messages, the connection key and model; text and usage out', async () => {
    const { outcome, listener } = await run(
      {
        provider: 'openai',
        connectionId: 'llm-1',
        operation: 'chat',
        messages: [{ role: 'user', content: 'Greet {{input["In"]["name"]}}' }],
      },
      { name: 'Ada' },
    );
    expect(outcome.status).toBe('completed');
    expect(listener.output('Model')).toEqual({
      text: 'Hello!',
      json: null,
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    const sent = llm.chatBodies().at(-1)!;
    expect(sent).toEqual({ model: 'tiny-chat', messages: [{ role: 'user', content: 'Greet Ada' }] });
  });

  test('openai chat with responseSchema: sends it as json_schema and returns the parsed, validated JSON', async () => {
    const responseSchema = {
      type: 'object',
      properties: { sentiment: { enum: ['positive', 'negative'] }, score: { type: 'number' } },
      required: ['sentiment', 'score'],
      additionalProperties: false,
    };
    const { outcome, listener } = await run({
      provider: 'openai',
      connectionId: 'llm-1',
      model: 'other-model',
      operation: 'chat',
      messages: [{ role: 'user', content: 'Rate this as JSON' }],
      responseSchema,
    });
    expect(outcome.status).toBe('completed');
    expect(listener.output('Model')).toMatchObject({ json: { sentiment: 'positive', score: 0.9 } });
    expect(llm.chatBodies().at(-1)).toMatchObject({
      model: 'other-model',
      response_format: { type: 'json_schema', json_schema: { schema: responseSchema } },
    });
    const refused = await run({
      provider: 'openai',
      connectionId: 'llm-1',
      operation: 'chat',
      messages: [{ role: 'user', content: 'Rate this as JSON' }],
      responseSchema: { type: 'object', required: ['label'] },
    });
    expect(refused.outcome).toMatchObject({
      status: 'failed',
      error: "the model's answer breaks its responseSchema: / must have required property 'label'",
    });
  });

  test('openai embeddings: one vector per input, in input order', async () => {
    const { outcome, listener } = await run({
      provider: 'openai',
      connectionId: 'llm-1',
      operation: 'embeddings',
      input: ['a', 'bbb'],
    });
    expect(outcome.status).toBe('completed');
    expect(listener.output('Model')).toEqual({
      embeddings: [
        [1, 0],
        [3, 1],
      ],
      usage: { prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 },
    });
  });

  test('openai: token counts a server reports as nonsense count 0, so the node state stays valid', async () => {
    const server = await startLocalHttpServer((_request, res) =>
      json(res, 200, {
        choices: [{ message: { role: 'assistant', content: 'hi' } }],
        usage: { prompt_tokens: 'many', completion_tokens: -5, total_tokens: 1.5 },
      }),
    );
    try {
      const { outcome, listener } = await run(
        { provider: 'openai', connectionId: 'llm-1', operation: 'chat', messages: [{ role: 'user', content: 'x' }] },
        {},
        { baseUrl: `${server.url}/v1` },
      );
      expect(outcome.status).toBe('completed');
      expect(listener.completed('Model')?.tokenUsage).toEqual({
        model: 'tiny-chat',
        calls: 1,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
      });
    } finally {
      await server.close();
    }
  });

  test('openai: an API error names the endpoint and status, never the key', async () => {
    const { outcome } = await run(
      { provider: 'openai', connectionId: 'llm-1', operation: 'chat', messages: [{ role: 'user', content: 'x' }] },
      {},
      { baseUrl: `${llm.url}/missing` },
    );
    expect(outcome).toMatchObject({ status: 'failed' });
    const error = (outcome as { error: string }).error;
    expect(error).toMatch(new RegExp(`^POST ${llm.url}/missing/chat/completions answered 404`));
    expect(error).not.toContain('sk-test');
  });

  test('openai: calls go through the outbound guard (a private target is refused with WEFT_OUTBOUND_BLOCK_PRIVATE)', async () => {
    const guarded = createNodePalette({ blockPrivate: true });
    const sent = llm.requests.length;
    try {
      const { outcome } = await run(
        { provider: 'openai', connectionId: 'llm-1', operation: 'chat', messages: [{ role: 'user', content: 'x' }] },
        {},
        { executors: guarded.executors },
      );
      expect(outcome).toMatchObject({ status: 'failed' });
      expect((outcome as { error: string }).error).toMatch(
        new RegExp(`^POST ${llm.baseUrl}/chat/completions failed: .*127\\.0\\.0\\.1`),
      );
      expect(llm.requests).toHaveLength(sent);
    } finally {
      await guarded.close();
    }
  });

  test('openai: timeoutMs fails the node when the API does not answer', async () => {
    const { outcome } = await run(
      {
        provider: 'openai',
        connectionId: 'llm-1',
        operation: 'chat',
        messages: [{ role: 'user', content: 'x' }],
        timeoutMs: 100,
      },
      {},
      { baseUrl: `${llm.url}/hang/v1` },
    );
    expect(outcome).toMatchObject({
      status: 'failed',
      error: `POST ${llm.url}/hang/v1/chat/completions timed out after 100 ms`,
    });
  });

  test('openai: cancelling the execution aborts the request in flight', async () => {
    const controller = new AbortController();
    const closedBefore = llm.closed;
    const hangs = () => llm.requests.filter((r) => r.url.includes('/hang/')).length;
    const hangsBefore = hangs();
    const running = run(
      { provider: 'openai', connectionId: 'llm-1', operation: 'chat', messages: [{ role: 'user', content: 'x' }] },
      {},
      { baseUrl: `${llm.url}/hang/v1`, signal: controller.signal },
    );
    await waitUntil(() => hangs() > hangsBefore);
    controller.abort(new Error('cancelled'));
    const { outcome } = await running;
    expect(outcome.status).toBe('aborted');
    await waitUntil(() => llm.closed > closedBefore);
  });
});
