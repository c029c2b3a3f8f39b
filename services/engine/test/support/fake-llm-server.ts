import type { ServerResponse } from 'node:http';
import { json, startLocalHttpServer, type LocalHttpServer, type ReceivedRequest } from './local-http-server.js';

/**
 * A loopback server speaking the OpenAI wire format (`/v1/chat/completions`, `/v1/embeddings`).
 * `reply` picks each chat answer's content from the request; `hang` paths never answer (timeouts,
 * cancels), and `closed` counts requests whose connection the client dropped.
 */
export interface FakeLlm extends LocalHttpServer {
  baseUrl: string;
  chatBodies(): { model: string; messages: { role: string; content: string }[]; response_format?: unknown }[];
  closed: number;
}

export async function startFakeLlm(
  reply: (body: { model: string; messages: { role: string; content: string }[] }, index: number) => string,
): Promise<FakeLlm> {
  let chats = 0;
  const state = { closed: 0 };
  const server = await startLocalHttpServer((request: ReceivedRequest, res: ServerResponse) => {
    if (request.url.includes('/hang/')) {
      res.on('close', () => state.closed++);
      return;
    }
    if (!request.url.startsWith('/v1/')) return json(res, 404, { error: { message: 'unknown path' } });
    if (request.headers.authorization !== 'Bearer sk-test') return json(res, 401, { error: { message: 'bad key' } });
    const body = JSON.parse(request.body) as { model: string; messages: never[]; input?: string | string[] };
    if (request.url.endsWith('/chat/completions')) {
      const content = reply(body, chats++);
      return json(res, 200, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
    }
    if (request.url.endsWith('/embeddings')) {
      const inputs = Array.isArray(body.input) ? body.input : [body.input ?? ''];
      // Two data items in reverse order: the client must order them by index.
      return json(res, 200, {
        object: 'list',
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: [text.length, index] })).reverse(),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    }
    return json(res, 404, { error: { message: 'unknown path' } });
  });
  return {
    url: server.url,
    requests: server.requests,
    close: () => server.close(),
    baseUrl: `${server.url}/v1`,
    chatBodies: () =>
      server.requests.filter((r) => r.url.endsWith('/chat/completions')).map((r) => JSON.parse(r.body) as never),
    get closed() {
      return state.closed;
    },
  };
}
