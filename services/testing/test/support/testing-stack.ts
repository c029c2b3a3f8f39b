import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { BOOTSTRAP_KEY, client, type CallResult } from '../../../all-in-one/test/weft-harness.js';
import { startWeftIn, type WeftMode, type WeftUnderTest } from '../../../all-in-one/test/weft-modes.js';
import { startDeployment, type Deployment } from '../../../all-in-one/test/support/deployment.js';
import { useSharedDeployment } from '../../../all-in-one/test/support/shared-deployment.js';

/** A running Weft reached over HTTP only, an organization with a user key, and process builders. */
export interface TestingStack {
  baseUrl: string;
  /** The bootstrap (system) API key of this Weft. */
  systemKey: string;
  orgId: string;
  userKey: string;
  userId: string;
  as(key: string): (method: string, path: string, body?: unknown) => Promise<CallResult>;
  createProcess(name: string, nodes: unknown[], edges: unknown[], extra?: Record<string, unknown>): Promise<string>;
  restrictedKey(processIds: string[]): Promise<string>;
  /** The id the catalog gave the node with this label. */
  nodeId(processId: string, label: string): Promise<string>;
  stop(): Promise<void>;
}

/** For suites that reach inside Weft (stop and restart it in process, open its store). */
export interface InProcessTestingStack extends TestingStack {
  under: WeftUnderTest;
}

/**
 * Weft as deployed (support/deployment.ts: WEFT_E2E_DEPLOYMENT picks embedded or distributed): the
 * run's shared deployment, or one of this suite's own when it needs WEFT_* variables.
 */
export async function startTestingDeployment(
  env: Record<string, string> = {},
): Promise<TestingStack & { deployment: Deployment }> {
  const deployment = Object.keys(env).length === 0 ? await useSharedDeployment() : await startDeployment({ env });
  try {
    return { ...(await testingStackOn(deployment.baseUrl, deployment.key, () => deployment.stop())), deployment };
  } catch (error) {
    await deployment.stop();
    throw error;
  }
}

/** Weft in this test process, in either mode (weft-modes.ts). */
export async function startTestingStack(
  mode: WeftMode,
  env: Record<string, string> = {},
): Promise<InProcessTestingStack> {
  const under = await startWeftIn(mode, env);
  try {
    return { ...(await testingStackOn(under.weft.url, BOOTSTRAP_KEY, () => under.dispose())), under };
  } catch (error) {
    await under.dispose();
    throw error;
  }
}

async function testingStackOn(baseUrl: string, systemKey: string, stop: () => Promise<void>): Promise<TestingStack> {
  const as = (key: string) => client(baseUrl, key);
  const system = as(systemKey);
  const org = await system('POST', '/api/v1/organizations', { name: `Acme ${randomUUID()}` });
  const userId = randomUUID();
  const key = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, { name: 'k', userName: 'Ann', userId });
  if (key.status !== 201) throw new Error(`no user key: ${JSON.stringify(key.body)}`);
  const stack: TestingStack = {
    baseUrl,
    systemKey,
    orgId: org.body.id,
    userKey: key.body.key,
    userId,
    as,
    stop,
    async createProcess(name, nodes, edges, extra = {}) {
      const created = await as(stack.userKey)('POST', `/api/v1/processes/by-org/${stack.orgId}`, {
        name,
        nodes,
        edges,
        ...extra,
      });
      if (created.status !== 201) throw new Error(`process not created: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    },
    async nodeId(processId, label) {
      const process = await as(stack.userKey)('GET', `/api/v1/processes/by-id/${processId}`);
      const node = (process.body.nodes as { id: string; config: { label: string } }[]).find(
        (candidate) => candidate.config.label === label,
      );
      if (!node) throw new Error(`no node ${label} in process ${processId}`);
      return node.id;
    },
    async restrictedKey(processIds) {
      const restricted = await system('POST', `/api/v1/api-keys/by-org/${stack.orgId}`, {
        name: 'restricted',
        userName: 'Rita',
        userId: randomUUID(),
        processIds,
      });
      return restricted.body.key as string;
    },
  };
  return stack;
}

/** A local HTTP server whose answers wait until released: holds a test run mid-batch without timing. */
export class GatedServer {
  private server: Server | undefined;
  private waiting: (() => void)[] = [];
  private open = false;
  requests = 0;
  url = '';

  async start(): Promise<void> {
    const server = createServer((_request, response) => {
      this.requests += 1;
      const answer = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      if (this.open) answer();
      else this.waiting.push(answer);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  }

  /** Answers the oldest waiting call. */
  releaseOne(): void {
    this.waiting.shift()?.();
  }

  release(): void {
    this.open = true;
    for (const answer of this.waiting.splice(0)) answer();
  }

  async stop(): Promise<void> {
    this.release();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** Reads until `done` holds; each read is a real request, so no fixed sleep decides the outcome. */
export async function readUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, tries = 600): Promise<T> {
  for (let attempt = 0; attempt < tries; attempt += 1) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition never held');
}

export { BOOTSTRAP_KEY };
