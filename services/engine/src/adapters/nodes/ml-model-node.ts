import type { MlModelNodeConfig, OnnxModelConfig, OpenAiModelConfig } from '@weft/contracts';
import {
  NodeFailure,
  type NodeExecutor,
  type NodeResult,
  type NodeRunContext,
} from '../../domain/nodes/node-executor.js';
import { readCappedBody, ResponseTooLargeError } from '../http/capped-body.js';
import { guardedFetch, OutboundBlockedError, type OutboundGuard } from '../http/outbound-guard.js';
import { authHeaders } from './integration-node.js';
import type { JsonSchemaValidators } from './json-schema-validators.js';
import { LlmEndpoint, tokenUsageOf } from './llm-client.js';
import { OnnxWorkerRestarted, type OnnxModels } from './onnx-models.js';
import { tensorInput, type TensorInput } from './onnx-tensors.js';
import { raceAbort } from './race-abort.js';

/**
 * `provider: "openai"`: chat (optionally with a JSON schema the answer must meet) or embeddings on
 * an OpenAI-compatible API; `provider: "onnx"`: one inference of an ONNX model on CPU, its session
 * shared by every execution of the engine.
 */
export interface MlModelNodeOptions {
  guard: OutboundGuard;
  responseMaxBytes: number;
  /** WEFT_MODEL_TIMEOUT_MS: a call's timeout when the node sets none. */
  timeoutMs: number;
  onnx: OnnxModels;
  validators: JsonSchemaValidators;
}

export const mlModelNodeExecutor = (options: MlModelNodeOptions): NodeExecutor<MlModelNodeConfig> => ({
  type: 'mlModelNode',
  execute(config, _input, context) {
    return config.provider === 'onnx' ? runOnnx(config, context, options) : runOpenAi(config, context, options);
  },
});

async function runOpenAi(config: OpenAiModelConfig, context: NodeRunContext, options: MlModelNodeOptions) {
  const endpoint = new LlmEndpoint(await context.connection(config.connectionId), {
    guard: options.guard,
    responseMaxBytes: options.responseMaxBytes,
  });
  const model = endpoint.modelOr(config.model);
  const call = { signal: context.signal, timeoutMs: config.timeoutMs ?? options.timeoutMs };
  if (config.operation === 'embeddings') {
    const output = await endpoint.embeddings({ model, input: config.input }, call);
    return { output, tokenUsage: tokenUsageOf(model, 1, output.usage) };
  }
  const { text, usage } = await endpoint.chat(
    { model, messages: config.messages.map(asChatMessage), responseSchema: config.responseSchema },
    call,
  );
  // DESIGN.md keeps `usage` in the output too; the node state records it like every model call's.
  const tokenUsage = tokenUsageOf(model, 1, usage);
  if (config.responseSchema === undefined) return { output: { text, json: null, usage }, tokenUsage };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new NodeFailure(`the model's answer is not the JSON its responseSchema asks for: ${text.slice(0, 200)}`);
  }
  const violations = options.validators.violations(config.responseSchema, json);
  if (violations.length > 0) {
    throw new NodeFailure(`the model's answer breaks its responseSchema: ${violations.join('; ')}`);
  }
  return { output: { text, json, usage }, tokenUsage };
}

/** A template that is a whole content keeps its JSON type; the API takes text, so other values go as JSON. */
const asChatMessage = (message: { role: string; content: unknown }) => ({
  role: message.role,
  content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? null),
});

/** A model from a URL, through the outbound guard, capped at WEFT_ONNX_MODEL_MAX_BYTES; an `http` connection gives its auth. */
async function downloadModel(
  url: URL,
  maxBytes: number,
  config: OnnxModelConfig,
  context: NodeRunContext,
  options: MlModelNodeOptions,
): Promise<Uint8Array> {
  const headers = config.connectionId ? authHeaders(await context.connection(config.connectionId)) : {};
  const where = `${url.origin}${url.pathname}`;
  try {
    const response = await guardedFetch(url, { headers, signal: context.signal }, options.guard, {
      credentialHeaders: Object.keys(headers),
    });
    if (response.status >= 400) {
      await response.body?.cancel();
      throw new NodeFailure(`GET ${where} (the model) answered ${response.status}`);
    }
    return await readCappedBody(response, maxBytes);
  } catch (error) {
    if (error instanceof NodeFailure || context.signal.aborted) throw error;
    if (error instanceof ResponseTooLargeError) {
      throw new NodeFailure(`the model is larger than ${maxBytes} bytes (WEFT_ONNX_MODEL_MAX_BYTES)`);
    }
    if (error instanceof OutboundBlockedError) throw new NodeFailure(`GET ${where} (the model): ${error.message}`);
    throw new NodeFailure(`GET ${where} (the model) failed: ${String((error as Error).cause ?? error)}`);
  }
}

/**
 * Tries of a run whose model is gone from the worker when the run reaches it: evicted by other
 * models, or loaded in a worker retired (another execution's run was stopped) before the run was sent.
 */
const RESTARTED_TRIES = 3;

async function runOnnx(config: OnnxModelConfig, context: NodeRunContext, options: MlModelNodeOptions) {
  const timeoutMs = config.timeoutMs ?? options.timeoutMs;
  const timedOut = `the ONNX model timed out after ${timeoutMs} ms`;
  // Aborted when the node stops waiting (cancel, timeout): an inference still running is left to
  // finish in its retired worker, and its result dropped (onnx-models.ts).
  const stop = new AbortController();
  try {
    return await raceAbort(context.signal, timeoutMs, timedOut, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await runOnnxOnce(config, context, options, stop.signal);
        } catch (error) {
          if (!(error instanceof OnnxWorkerRestarted)) throw error;
          if (attempt >= RESTARTED_TRIES) throw new NodeFailure(error.message);
        }
      }
    });
  } finally {
    stop.abort(context.signal.aborted ? context.signal.reason : new Error(timedOut));
  }
}

async function runOnnxOnce(
  config: OnnxModelConfig,
  context: NodeRunContext,
  options: MlModelNodeOptions,
  signal: AbortSignal,
): Promise<NodeResult> {
  const model = await options.onnx.load(context.organizationId, config.model, (url, maxBytes) =>
    downloadModel(url, maxBytes, config, context, options),
  );
  const missing = model.inputNames.filter((name) => !(name in config.inputs));
  if (missing.length > 0) throw new NodeFailure(`the model needs inputs ${missing.join(', ')}`);
  const feeds: Record<string, TensorInput> = {};
  for (const [name, spec] of Object.entries(config.inputs)) {
    if (!model.inputNames.includes(name)) {
      throw new NodeFailure(`the model has no input "${name}" (its inputs: ${model.inputNames.join(', ')})`);
    }
    feeds[name] = tensorInput(name, spec);
  }
  return { output: { outputs: await options.onnx.run(model, feeds, signal) } };
}
