import type { DecryptedConnection, TokenUsage } from '@weft/contracts';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { readCappedBody, ResponseTooLargeError } from '../http/capped-body.js';
import { guardedFetch, OutboundBlockedError, type OutboundGuard } from '../http/outbound-guard.js';

/**
 * An OpenAI-compatible API (`POST {baseUrl}/chat/completions`, `/embeddings`) reached through the
 * outbound guard with a capped response, on an `llm` connection `{baseUrl, apiKey, model?}`.
 * Errors name the endpoint and the answer, never the key (a base URL carrying credentials is refused).
 */
export interface LlmUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatMessage {
  role: string;
  content: string;
}

export interface LlmCallOptions {
  signal: AbortSignal;
  timeoutMs: number;
}

export interface LlmClientOptions {
  guard: OutboundGuard;
  /** WEFT_HTTP_RESPONSE_MAX_BYTES. */
  responseMaxBytes: number;
}

export const emptyUsage = (): LlmUsage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export const addUsage = (total: LlmUsage, more: LlmUsage): LlmUsage => ({
  prompt_tokens: total.prompt_tokens + more.prompt_tokens,
  completion_tokens: total.completion_tokens + more.completion_tokens,
  total_tokens: total.total_tokens + more.total_tokens,
});

/** The node-state record of `calls` model calls that spent `usage` in all. */
export const tokenUsageOf = (model: string, calls: number, usage: LlmUsage): TokenUsage => ({
  model,
  calls,
  ...usage,
});

/** A count the server reported; anything but a non-negative whole number (a string, NaN, -1, 1e400) counts 0. */
const tokens = (value: unknown): number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;

const usageOf = (body: { usage?: Partial<LlmUsage> }): LlmUsage => ({
  prompt_tokens: tokens(body.usage?.prompt_tokens),
  completion_tokens: tokens(body.usage?.completion_tokens),
  total_tokens: tokens(body.usage?.total_tokens),
});

export class LlmEndpoint {
  readonly baseUrl: string;
  private readonly apiKey: string;
  readonly defaultModel: string | undefined;

  constructor(
    connection: DecryptedConnection,
    private readonly options: LlmClientOptions,
  ) {
    if (connection.type !== 'llm') {
      throw new NodeFailure(`connection "${connection.name}" is of type ${connection.type}, not llm`);
    }
    const { baseUrl, apiKey, model } = connection.data;
    this.baseUrl = checkedBaseUrl(connection.name, baseUrl);
    this.apiKey = typeof apiKey === 'string' ? apiKey : '';
    this.defaultModel = typeof model === 'string' && model !== '' ? model : undefined;
  }

  modelOr(model: string | undefined): string {
    const chosen = model ?? this.defaultModel;
    if (!chosen) throw new NodeFailure('no model: set `model` on the node or on its llm connection');
    return chosen;
  }

  async chat(
    request: { model: string; messages: ChatMessage[]; responseSchema?: unknown },
    call: LlmCallOptions,
  ): Promise<{ text: string; usage: LlmUsage }> {
    const body: Record<string, unknown> = { model: request.model, messages: request.messages };
    if (request.responseSchema !== undefined) {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: 'response', schema: request.responseSchema, strict: true },
      };
    }
    const answer = (await this.post('/chat/completions', body, call)) as {
      choices?: { message?: { content?: unknown } }[];
      usage?: Partial<LlmUsage>;
    };
    const content = answer.choices?.[0]?.message?.content;
    if (typeof content !== 'string')
      throw new NodeFailure(`${this.baseUrl}/chat/completions answered without a message`);
    return { text: content, usage: usageOf(answer) };
  }

  async embeddings(
    request: { model: string; input: string | string[] },
    call: LlmCallOptions,
  ): Promise<{ embeddings: number[][]; usage: LlmUsage }> {
    const answer = (await this.post('/embeddings', { model: request.model, input: request.input }, call)) as {
      data?: { index?: number; embedding?: unknown }[];
      usage?: Partial<LlmUsage>;
    };
    if (!Array.isArray(answer.data)) throw new NodeFailure(`${this.baseUrl}/embeddings answered without data`);
    const ordered = [...answer.data].sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0));
    return {
      embeddings: ordered.map((item) => (Array.isArray(item.embedding) ? item.embedding : [])),
      usage: usageOf(answer),
    };
  }

  private async post(path: string, body: unknown, call: LlmCallOptions): Promise<unknown> {
    const shown = `${this.baseUrl}${path}`;
    const url = new URL(shown);
    const timeout = AbortSignal.timeout(call.timeoutMs);
    try {
      const response = await guardedFetch(
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
          },
          body: JSON.stringify(body),
          signal: AbortSignal.any([call.signal, timeout]),
        },
        this.options.guard,
      );
      const text = new TextDecoder().decode(await readCappedBody(response, this.options.responseMaxBytes));
      if (response.status >= 400) {
        throw new NodeFailure(`POST ${shown} answered ${response.status}: ${text.slice(0, 500)}`);
      }
      try {
        return JSON.parse(text);
      } catch {
        throw new NodeFailure(`POST ${shown} answered with a body that is not JSON: ${text.slice(0, 200)}`);
      }
    } catch (error) {
      if (error instanceof NodeFailure || call.signal.aborted) throw error;
      if (timeout.aborted) throw new NodeFailure(`POST ${shown} timed out after ${call.timeoutMs} ms`);
      if (error instanceof OutboundBlockedError || error instanceof ResponseTooLargeError) {
        throw new NodeFailure(`POST ${shown} failed: ${error.message}`);
      }
      throw new NodeFailure(`POST ${shown} failed: ${String((error as Error).cause ?? error)}`);
    }
  }
}

/**
 * The connection's base URL without trailing slashes, refused unless it is an http(s) URL without
 * credentials, query or fragment: fetch would refuse `https://user:key@host` with an error quoting
 * the whole URL, and every error message names the endpoint. Refusals never quote the URL, which
 * may hold a key.
 */
function checkedBaseUrl(connectionName: string, baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || baseUrl === '') {
    throw new NodeFailure(`llm connection "${connectionName}" has no baseUrl`);
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new NodeFailure(`llm connection "${connectionName}" has a baseUrl that is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NodeFailure(
      `llm connection "${connectionName}" has a baseUrl of scheme ${url.protocol}, not http or https`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new NodeFailure(
      `llm connection "${connectionName}" has credentials in its baseUrl: put the key in apiKey instead`,
    );
  }
  // Paths are appended to the base URL, and every error names it: a query or fragment (where a
  // key might sit) would end up inside the path and in the messages.
  if (url.search !== '' || url.hash !== '') {
    throw new NodeFailure(
      `llm connection "${connectionName}" has a query or fragment in its baseUrl: give the API root only, and the key in apiKey`,
    );
  }
  return url.toString().replace(/\/+$/, '');
}
