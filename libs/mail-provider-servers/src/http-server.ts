import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  response: ServerResponse,
) => Promise<void> | void;

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(text);
}

export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A loopback HTTP server; `url` is its base (`http://127.0.0.1:<port>`). */
export interface LocalServer {
  url: string;
  close(): Promise<void>;
}

export async function listenLocal(handler: Handler, port = 0): Promise<LocalServer> {
  const server: Server = createServer((request, response) => {
    void (async () => {
      try {
        const body = await readBody(request);
        const url = new URL(request.url ?? '/', `http://${request.headers.host ?? '127.0.0.1'}`);
        await handler(request, url, body, response);
      } catch (error) {
        if (!response.headersSent) sendJson(response, 500, { error: { message: (error as Error).message } });
        else response.end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
