import type { SchematizationLlmConfig, SchematizationNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor, type NodeRunContext } from '../../domain/nodes/node-executor.js';
import type { OutboundGuard } from '../http/outbound-guard.js';
import type { DataBlockSchemas } from './data-block-schemas.js';
import type { JsonataMappings } from './jsonata-mapping.js';
import type { JsonSchemaValidators } from './json-schema-validators.js';
import { addUsage, emptyUsage, LlmEndpoint, tokenUsageOf, type ChatMessage, type LlmUsage } from './llm-client.js';

/**
 * Fills the selected data blocks of a process schema from the node's input: `mapping` evaluates one
 * JSONata expression per block; `llm` asks a chat model for all blocks at once under a JSON schema
 * and feeds validation errors back up to `maxRepairs` times. Every block is validated against its
 * JSON schema; the node fails listing every violation. Output `{<block>: data}`, one handle per block
 * carrying that block's data; `llm` records its token usage, summed over attempts, in the node state.
 */
export interface SchematizationNodeOptions {
  schemas: DataBlockSchemas;
  mappings: JsonataMappings;
  validators: JsonSchemaValidators;
  guard: OutboundGuard;
  responseMaxBytes: number;
  /** WEFT_MODEL_TIMEOUT_MS: the timeout when the node sets none (per expression or per model call). */
  timeoutMs: number;
}

export const DEFAULT_MAX_REPAIRS = 2;

type Block = { name: string; jsonSchema: unknown };

export const schematizationNodeExecutor = (
  options: SchematizationNodeOptions,
): NodeExecutor<SchematizationNodeConfig> => ({
  type: 'schematizationNode',
  // Each block's handle carries that block's data.
  handlesCarryOutputKeys: true,
  // JSONata is its own language: `{{` inside an expression is not a template.
  rawConfigKeys: ['mappings'],
  async execute(config, input, context) {
    const blocks = await blocksOf(config, context, options.schemas);
    const timeoutMs = config.timeoutMs ?? options.timeoutMs;
    if (config.mode === 'mapping') {
      const data: Record<string, unknown> = {};
      for (const block of blocks) {
        const expression = config.mappings[block.name];
        if (expression === undefined) throw new NodeFailure(`no mapping for data block "${block.name}"`);
        const what = `mapping of "${block.name}"`;
        // In a worker thread: a timeout, a cancel or the memory limit ends the evaluation itself.
        data[block.name] = await options.mappings.evaluate(
          what,
          expression,
          input,
          timeoutMs,
          context.signal,
          context.organizationId,
        );
      }
      const violations = blockViolations(blocks, data, options.validators);
      if (violations.length > 0)
        throw new NodeFailure(`data blocks do not match their schemas: ${violations.join('; ')}`);
      return { output: data, handles: blocks.map((block) => block.name) };
    }
    return extractWithModel(config, blocks, context, options, timeoutMs);
  },
});

async function blocksOf(config: SchematizationNodeConfig, context: NodeRunContext, schemas: DataBlockSchemas) {
  let found: Block[];
  try {
    found = await schemas.blocksOf(context.organizationId, config.schemaId, config.selectedDataBlocks);
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 404) throw new NodeFailure(`schema ${config.schemaId} not found`);
    throw error;
  }
  const byName = new Map(found.map((block) => [block.name, block]));
  const missing = config.selectedDataBlocks.filter((name) => !byName.has(name));
  if (missing.length > 0) {
    throw new NodeFailure(
      `schema ${config.schemaId} has no data block ${missing.map((name) => `"${name}"`).join(', ')}`,
    );
  }
  return config.selectedDataBlocks.map((name) => byName.get(name) as Block);
}

function blockViolations(blocks: Block[], data: Record<string, unknown>, validators: JsonSchemaValidators): string[] {
  return blocks.flatMap((block) =>
    validators.violations(block.jsonSchema, data[block.name]).map((violation) => `"${block.name}" ${violation}`),
  );
}

const sourceText = (source: unknown): string => (typeof source === 'string' ? source : JSON.stringify(source ?? null));

async function extractWithModel(
  config: SchematizationLlmConfig,
  blocks: Block[],
  context: NodeRunContext,
  options: SchematizationNodeOptions,
  timeoutMs: number,
) {
  const endpoint = new LlmEndpoint(await context.connection(config.connectionId), {
    guard: options.guard,
    responseMaxBytes: options.responseMaxBytes,
  });
  const model = endpoint.modelOr(config.model);
  const responseSchema = {
    type: 'object',
    properties: Object.fromEntries(blocks.map((block) => [block.name, block.jsonSchema])),
    required: blocks.map((block) => block.name),
    additionalProperties: false,
  };
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content:
        'Extract data from the text the user gives. Answer with one JSON object that has one property per data block ' +
        `(${blocks.map((block) => block.name).join(', ')}), each matching its JSON schema. ` +
        'Use null only where a schema allows it; never invent values the text does not contain.' +
        (config.instructions ? `\n${config.instructions}` : ''),
    },
    { role: 'user', content: sourceText(config.source) },
  ];
  const maxRepairs = config.maxRepairs ?? DEFAULT_MAX_REPAIRS;
  let usage: LlmUsage = emptyUsage();
  let problems: string[] = [];
  for (let attempt = 1; attempt <= maxRepairs + 1; attempt++) {
    const answer = await endpoint.chat({ model, messages, responseSchema }, { signal: context.signal, timeoutMs });
    usage = addUsage(usage, answer.usage);
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.text);
      problems =
        parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
          ? blockViolations(blocks, parsed as Record<string, unknown>, options.validators)
          : ['/ the answer is not a JSON object'];
    } catch {
      problems = ['/ the answer is not valid JSON'];
    }
    if (problems.length === 0) {
      const data = parsed as Record<string, unknown>;
      return {
        output: Object.fromEntries(blocks.map((block) => [block.name, data[block.name]])),
        handles: blocks.map((block) => block.name),
        tokenUsage: tokenUsageOf(model, attempt, usage),
      };
    }
    messages.push(
      { role: 'assistant', content: answer.text },
      {
        role: 'user',
        content: `That answer does not match the schemas:\n${problems.map((problem) => `- ${problem}`).join('\n')}\nAnswer again with the corrected JSON object only.`,
      },
    );
  }
  throw new NodeFailure(
    `the model could not fill the data blocks after ${maxRepairs + 1} attempts (${usage.total_tokens} tokens): ${problems.join('; ')}`,
  );
}
