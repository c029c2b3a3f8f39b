import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { client } from './weft-harness.js';
import {
  createTestDatabase,
  freePort,
  startNatsServer,
  type TestDatabase,
  type TestNatsServer,
} from '@weft/test-support';

/**
 * Four organizations share one Weft (all services in one process over real NATS and PostgreSQL,
 * started from its build as a user would). Three run a healthy process with a side effect; the
 * fourth sends every poison value the hardening review found: NUL characters and lone surrogates
 * in input and in node outputs, a 17 MB script output, a template bomb, a 30-day wait, a 64 MB
 * HTTP response and a loop over 200,000 items. The healthy organizations' executions all complete,
 * each side effect happens exactly once (no completed node runs again), the poison executions
 * fail with a reason, the relay publishes every event, and the process never dies.
 */
const root = resolve(__dirname, '../../..');
const main = join(root, 'services/all-in-one/dist/main.js');
const KEY = 'weft_chaos_test_key_0123456789abcdef';
const HEALTHY_RUNS_PER_ORG = 24;

type Call = ReturnType<typeof client>;
const node = (id: string, type: string, x: number, config: Record<string, unknown>) => ({
  id,
  type,
  position: { x, y: 0 },
  config,
});
const chain = (...ids: string[]) => ids.slice(1).map((id, i) => ({ source_node_id: ids[i]!, target_node_id: id }));
const input = node('in', 'inputNode', 0, { label: 'In', triggerType: 'manual' });
const output = (x: number) => node('out', 'outputNode', x, { label: 'Out', returnToClient: true });

describe('tenant chaos: one poisoning organization cannot hurt the others', () => {
  let nats: TestNatsServer;
  let database: TestDatabase;
  let dataDir: string;
  let weft: ChildProcess;
  let sideEffects: Server;
  let sideEffectUrl: string;
  let baseUrl: string;
  const logs: string[] = [];
  const hits = new Map<string, number>();

  beforeAll(async () => {
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`pnpm build\` before the e2e tests`);
    sideEffects = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (url.pathname === '/huge') {
        // 64 MB in 1 MB chunks: the engine must stop reading at its cap.
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(1024 * 1024, 120);
        let sent = 0;
        const pump = (): void => {
          while (sent < 64 && response.write(chunk)) sent++;
          if (sent >= 64) response.end();
          else response.once('drain', pump);
        };
        response.on('error', () => undefined);
        pump();
        return;
      }
      const token = url.searchParams.get('token') ?? 'none';
      hits.set(token, (hits.get(token) ?? 0) + 1);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((done) => sideEffects.listen(0, '127.0.0.1', done));
    sideEffectUrl = `http://127.0.0.1:${(sideEffects.address() as { port: number }).port}`;

    nats = await startNatsServer();
    database = await createTestDatabase('weft_chaos');
    dataDir = await mkdtemp(join(tmpdir(), 'weft-chaos-'));
    const port = await freePort();
    weft = spawn(process.execPath, ['--max-old-space-size=1024', main], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        WEFT_PORT: String(port),
        WEFT_HOST: '127.0.0.1',
        WEFT_DATA_DIR: dataDir,
        WEFT_NATS_URL: nats.url,
        WEFT_DATABASE_URL: database.url,
        WEFT_BOOTSTRAP_API_KEY: KEY,
        WEFT_SECRET_KEY: 'chaos-test-secret-key-0123456789abcdef',
        WEFT_LOG_LEVEL: 'warn',
      },
      stdio: 'pipe',
    });
    weft.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    weft.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    baseUrl = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 60_000;
    while (
      (await fetch(`${baseUrl}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) !== 200
    ) {
      if (weft.exitCode !== null || Date.now() > deadline) throw new Error(`Weft did not start:\n${logs.join('')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 90_000);

  afterAll(async () => {
    weft?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    if (weft && weft.exitCode === null) weft.kill('SIGKILL');
    await nats?.stop();
    await database?.drop();
    await new Promise((r) => sideEffects?.close(r));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const organization = async (name: string): Promise<{ id: string; call: Call }> => {
    const system = client(baseUrl, KEY);
    const org = await system('POST', '/api/v1/organizations', { name });
    const key = await system('POST', `/api/v1/api-keys/by-org/${org.body.id}`, {
      name: 'chaos',
      userName: name,
      userId: crypto.randomUUID(),
    });
    return { id: org.body.id, call: client(baseUrl, key.body.key) };
  };

  const createProcess = async (
    org: { id: string; call: Call },
    name: string,
    nodes: unknown[],
    edges: unknown[],
  ): Promise<string> => {
    const created = await org.call('POST', `/api/v1/processes/by-org/${org.id}`, { name, nodes, edges });
    if (created.status !== 201) throw new Error(`${name}: ${created.status} ${JSON.stringify(created.body)}`);
    return created.body.id;
  };

  test('healthy organizations complete, exactly once, while another poisons', async () => {
    const healthy = await Promise.all(['Alpha', 'Beta', 'Gamma'].map(organization));
    const poisoner = await organization('Poisoner');

    const healthyProcesses = await Promise.all(
      healthy.map((org) =>
        createProcess(
          org,
          'double and record',
          [
            input,
            node('dbl', 'scriptNode', 1, { label: 'Double', code: 'return { v: input.In.n * 2 };' }),
            node('hit', 'integrationNode', 2, {
              label: 'Record',
              method: 'POST',
              url: `${sideEffectUrl}/hit`,
              query: { token: '{{input["In"]["token"]}}' },
              body: { v: '{{input["Double"]["v"]}}' },
            }),
            output(3),
          ],
          chain('in', 'dbl', 'hit', 'out'),
        ),
      ),
    );

    const script = (code: string) => [input, node('s', 'scriptNode', 1, { label: 'S', code }), output(2)];
    const poisons: Record<string, { nodes: unknown[]; edges: unknown[] }> = {
      nulOutput: { nodes: script('return { s: String.fromCharCode(0) };'), edges: chain('in', 's', 'out') },
      surrogateOutput: { nodes: script('return { s: String.fromCharCode(0xd800) };'), edges: chain('in', 's', 'out') },
      hugeOutput: { nodes: script("return { s: 'x'.repeat(17 * 1024 * 1024) };"), edges: chain('in', 's', 'out') },
      templateBomb: {
        nodes: [
          input,
          node('big', 'scriptNode', 1, { label: 'Big', code: "return { big: 'x'.repeat(1024 * 1024) };" }),
          node('out', 'outputNode', 2, {
            label: 'Out',
            returnToClient: true,
            fields: { bomb: 'a{{input["Big"]["big"]}}'.repeat(2000) },
          }),
        ],
        edges: chain('in', 'big', 'out'),
      },
      hugeResponse: {
        nodes: [
          input,
          node('get', 'integrationNode', 1, { label: 'Get', method: 'GET', url: `${sideEffectUrl}/huge` }),
          output(2),
        ],
        edges: chain('in', 'get', 'out'),
      },
      loopBomb: {
        nodes: [
          input,
          node('items', 'scriptNode', 1, {
            label: 'Items',
            code: 'return { list: Array.from({ length: 200000 }, (_, i) => i) };',
          }),
          node('loop', 'loopNode', 2, { label: 'Loop', items: '{{input["Items"]["list"]}}' }),
          node('body', 'scriptNode', 3, { label: 'Body', code: 'return { i: input.Loop.index };' }),
          output(4),
        ],
        edges: [
          ...chain('in', 'items', 'loop'),
          { source_node_id: 'loop', target_node_id: 'body', source_handle: 'start' },
          { source_node_id: 'loop', target_node_id: 'out', source_handle: 'output' },
        ],
      },
    };
    const poisonIds: Record<string, string> = {};
    for (const [name, { nodes, edges }] of Object.entries(poisons)) {
      poisonIds[name] = await createProcess(poisoner, name, nodes, edges);
    }
    const longWait = await createProcess(
      poisoner,
      'thirty days',
      [input, node('w', 'waitNode', 1, { label: 'Wait', seconds: 30 * 24 * 3600 }), output(2)],
      chain('in', 'w', 'out'),
    );
    const echo = await createProcess(poisoner, 'echo', [input, output(1)], chain('in', 'out'));

    // The poisoner keeps going while the healthy organizations run.
    const poisonRuns = (async () => {
      const answers: Record<string, unknown[]> = {};
      for (let round = 0; round < 2; round++) {
        for (const [name, id] of Object.entries(poisonIds)) {
          const answer = await poisoner.call('POST', `/api/v1/processes/test/${id}`, {});
          (answers[name] ??= []).push(answer);
        }
        for (const raw of ['{"a":"\\u0000"}', '{"a":"\\ud800"}', '{"\\u0000":1}']) {
          (answers.rawInput ??= []).push(await poisoner.call('POST', `/api/v1/processes/test/${echo}`, raw));
        }
        (answers.longWait ??= []).push(
          await poisoner.call('POST', `/api/v1/processes/test/${longWait}?waitSeconds=0`, {}),
        );
      }
      return answers as Record<string, Array<{ status: number; body: any }>>;
    })();

    const healthyRuns = healthy.map(async (org, index) => {
      const results: Array<{ n: number; token: string; status: number; body: any }> = [];
      for (let batch = 0; batch < HEALTHY_RUNS_PER_ORG / 4; batch++) {
        const runs = await Promise.all(
          [0, 1, 2, 3].map(async (i) => {
            const n = batch * 4 + i;
            const token = `${index}-${n}-${crypto.randomUUID()}`;
            const answer = await org.call('POST', `/api/v1/processes/test/${healthyProcesses[index]}`, { n, token });
            return { n, token, status: answer.status, body: answer.body };
          }),
        );
        results.push(...runs);
      }
      return results;
    });

    const [poisonAnswers, ...healthyResults] = await Promise.all([poisonRuns, ...healthyRuns]);

    // Healthy organizations: every run completed with the right output, each side effect once.
    for (const results of healthyResults) {
      for (const run of results) {
        // The reason rides along only when the run did not complete, so a failure says why.
        const error = run.body?.status === 'completed' ? undefined : (run.body?.error_message ?? run.body);
        expect({ status: run.status, execution: run.body?.status, error }).toEqual({
          status: 200,
          execution: 'completed',
        });
        expect(run.body.output_data.Out.Double).toEqual({ v: run.n * 2 });
        expect(hits.get(run.token)).toBe(1);
      }
    }

    // The poisoner: input it cannot store is refused; every poisonous execution failed with a reason.
    for (const answer of poisonAnswers.rawInput!) expect(answer.status).toBe(400);
    for (const name of Object.keys(poisonIds)) {
      for (const answer of poisonAnswers[name]!) {
        const executionId = answer.body?.execution_id ?? answer.body?.id;
        expect(executionId).toEqual(expect.any(String));
        const record = await poisoner.call('GET', `/api/v1/processes/execution/${executionId}`);
        expect({ name, status: record.body.status }).toEqual({ name, status: 'failed' });
        expect(record.body.error_message).toEqual(expect.any(String));
      }
    }
    for (const answer of poisonAnswers.longWait!) {
      expect(answer.status).toBe(202);
      const record = await poisoner.call('GET', `/api/v1/processes/execution/${answer.body.execution_id}`);
      expect(record.body.status).toBe('running');
    }

    // The process lives and still serves; a little later no side effect has happened twice.
    await new Promise((r) => setTimeout(r, 3000));
    expect(weft.exitCode).toBeNull();
    expect((await fetch(`${baseUrl}/readyz`)).status).toBe(200);
    expect([...hits.values()].filter((count) => count !== 1)).toEqual([]);
    expect(hits.size).toBe(healthy.length * HEALTHY_RUNS_PER_ORG);

    // No completed node ran again: one NodeCompleted per node of each healthy execution.
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const repeated = await db.query(
        `SELECT stream_id, data->>'nodeId' AS node, count(*) AS n FROM events
          WHERE type = 'NodeCompleted' GROUP BY 1, 2, data->'iteration' HAVING count(*) > 1`,
      );
      expect(repeated.rows).toEqual([]);
      // The relay keeps publishing: every committed position reaches JetStream.
      // Positions may skip values (rolled-back batches), so compare counts, one message per event.
      const total = Number((await db.query('SELECT count(*) AS n FROM events')).rows[0].n);
      const connection = await connect({ servers: nats.url });
      try {
        const jsm = await jetstreamManager(connection);
        const deadline = Date.now() + 30_000;
        let published = 0;
        while (Date.now() < deadline) {
          published = (await jsm.streams.info('WEFT_EVENTS')).state.messages;
          if (published >= total) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        expect(published).toBe(total);
      } finally {
        await connection.close();
      }
    } finally {
      await db.end();
    }
  }, 300_000);
});
