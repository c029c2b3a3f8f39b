import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, weftServes } from '@weft/test-support';
import { client } from '../weft-harness.js';
import { DEPLOYMENT_KEY, deploymentKind, startDeployment, type Deployment } from './deployment.js';

/**
 * One deployment (support/deployment.ts) shared by every suite of a jest run that needs plain Weft:
 * no special variables, no process killed or restarted. Starting Weft as separate processes costs
 * 10-20 s on this machine; shared, it is paid once per deployment kind instead of once per suite.
 * Suites on it create their own organizations and never assert on what other suites did.
 *
 * jest's globalSetup starts it in the background when WEFT_E2E_SHARED=1 (scripts/run-tests.sh
 * sets it for the e2e tier) and publishes its address in WEFT_E2E_SHARED_URL before the workers
 * start; a suite waits until it serves. Without the variables (one file run by hand) a suite
 * starts a deployment of its own.
 */
const WORKSPACE_ROOT = resolve(__dirname, '../../../..');
const SHARED_URL = 'WEFT_E2E_SHARED_URL';
const SHARED_FAILURE = 'WEFT_E2E_SHARED_FAILURE_FILE';
const holder = globalThis as { weftSharedDeployment?: Promise<Deployment | undefined> };

export async function globalSetup(): Promise<void> {
  const port = await freePort();
  const failureFile = join(tmpdir(), `weft-e2e-shared-${process.pid}-${port}.failed`);
  process.env[SHARED_URL] = `http://127.0.0.1:${port}`;
  process.env[SHARED_FAILURE] = failureFile;
  holder.weftSharedDeployment = startDeployment({ httpPort: port }).catch((error: unknown) => {
    writeFileSync(failureFile, error instanceof Error ? (error.stack ?? error.message) : String(error));
    return undefined;
  });
}

export async function globalTeardown(): Promise<void> {
  await (await holder.weftSharedDeployment)?.stop();
}

/** The run's shared deployment once it serves, or a deployment of this suite's own. */
export async function useSharedDeployment(): Promise<Deployment> {
  const baseUrl = process.env[SHARED_URL];
  if (!baseUrl) return startDeployment();
  const failureFile = process.env[SHARED_FAILURE] ?? '';
  const call = client(baseUrl, DEPLOYMENT_KEY);
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (existsSync(failureFile))
      throw new Error(`the shared deployment did not start:\n${readFileSync(failureFile, 'utf8')}`);
    if (await weftServes(WORKSPACE_ROOT, baseUrl, DEPLOYMENT_KEY).catch(() => false)) break;
    if (Date.now() > deadline) throw new Error(`the shared deployment at ${baseUrl} never served`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const shared = (what: string) => () => {
    throw new Error(`${what}: the shared deployment is not this suite's; start one with startDeployment()`);
  };
  return {
    kind: deploymentKind(),
    baseUrl,
    key: DEPLOYMENT_KEY,
    call,
    names: shared('names'),
    pid: shared('pid'),
    connectNatsAs: shared('connectNatsAs'),
    kill: shared('kill'),
    restart: shared('restart'),
    add: shared('add'),
    output: () => '(the shared deployment keeps its output in the jest parent process)',
    // Other suites still use it: the jest run stops it at the end.
    stop: async () => undefined,
  };
}
