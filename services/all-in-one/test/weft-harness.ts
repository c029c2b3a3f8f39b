import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type WeftConfig } from '@weft/config';
import { startWeft, type RunningWeft } from '../src/weft-runtime.js';

/**
 * Real collaborators only: the whole embedded Weft (its own PostgreSQL in a temp dir, in-memory bus) over
 * HTTP on 127.0.0.1 with a random port.
 */
export const BOOTSTRAP_KEY = 'weft_test_bootstrap_key_0123456789abcdef';

export async function tempDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'weft-e2e-'));
}

export async function startEmbedded(dataDir: string, env: Record<string, string> = {}): Promise<RunningWeft> {
  const config: WeftConfig = loadConfig({ WEFT_PORT: '0', WEFT_HOST: '127.0.0.1', WEFT_DATA_DIR: dataDir, ...env });
  return startWeft(config);
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export interface CallResult {
  status: number;
  contentType: string;
  body: any;
}

export function client(baseUrl: string, key?: string) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<CallResult> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: parsed };
  };
}
