import type { Batch } from './batch-types.js';

/** A refusal or failure of the Weft API, with the problem's detail when it sent one. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The two calls `weft test` makes: start a batch without waiting, read its progress. */
export class WeftClient {
  private readonly url: string;
  private readonly key: string;

  constructor(url: string, key: string) {
    this.url = url;
    this.key = key;
  }

  startBatch(body: { processId: string; testCaseIds?: string[]; tags?: string[] }): Promise<Batch> {
    return this.call('POST', '/api/v1/test-runs/batch?waitSeconds=0', body);
  }

  readBatch(id: string): Promise<Batch> {
    return this.call('GET', `/api/v1/test-runs/batches/${encodeURIComponent(id)}`);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        headers: { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new ApiError(0, `cannot reach ${this.url}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = await response.text();
    const parsed = parse(text);
    if (!response.ok) {
      const problem = parsed as
        { detail?: string; title?: string; errors?: { path: string; message: string }[] } | undefined;
      const details = (problem?.errors ?? []).map((error) => `${error.path} ${error.message}`).join('; ');
      const message = [problem?.detail ?? problem?.title ?? text, details].filter(Boolean).join(': ');
      throw new ApiError(response.status, `${method} ${path} answered ${response.status}: ${message}`);
    }
    return parsed as T;
  }
}

const parse = (text: string): unknown => {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
};
