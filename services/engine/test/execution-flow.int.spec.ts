import { engineHttp, type ExecutionRecord, type ExecutionStats, type ProcessRecord } from '@weft/contracts';
import { createPool, type Pool } from 'mysql2/promise';
import { everyNodeTypeProcess } from './fixtures/every-node-type.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { testDatabaseUrl, testMysqlConnection } from './support/test-services.js';
import { waitUntil } from './support/wait-until.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('executions through POST /processes/test (%s)', (mode) => {
  let harness: EngineHarness;
  let server: LocalHttpServer;
  let mysql: Pool;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  const mysqlTable = `engine_flow_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let flakyFailures = 0;
  let counterHits = 0;

  beforeAll(async () => {
    server = await startLocalHttpServer((request, res) => {
      if (request.url.startsWith('/counter')) return json(res, 200, { hit: ++counterHits });
      if (request.url.startsWith('/flaky') && flakyFailures-- > 0) return json(res, 400, { error: 'not yet' });
      return json(res, 200, { received: request.body ? JSON.parse(request.body) : null });
    });
    mysql = createPool(testMysqlConnection());
    await mysql.query(`create table ${mysqlTable} (id int auto_increment primary key, total int)`);
    harness = await startEngineHarness(mode);
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
    await mysql.query(`drop table ${mysqlTable}`);
    await mysql.end();
  });

  const register = (process: ProcessRecord): Promise<ProcessRecord> => harness.catalog.add(process);
  const test_ = (processId: string, body: unknown, query: Record<string, string> = {}) =>
    harness.call(engineHttp.testProcess, { params: { processId }, query, body }, actor);

  test('a process with every node type runs with the right statuses, outputs, skipped branch and node states', async () => {
    const fixture = await everyNodeTypeProcess({
      organizationId: org,
      httpUrl: server.url,
      postgresUrl: testDatabaseUrl(),
      mysqlTable,
      addConnection: (connection) => harness.catalog.addConnection(connection),
    });
    const process = await register(fixture.process);

    const reply = await test_(process.id, { amount: 60, items: [3, 4, 5] });
    expect(reply.status).toBe(200);
    const record = reply.body as ExecutionRecord;
    expect(record).toMatchObject({
      status: 'completed',
      process_id: process.id,
      trigger_node_id: fixture.graph.id('In'),
      input_data: { amount: 60, items: [3, 4, 5] },
      triggered_by_user_id: actor.userId,
      error_message: null,
      attempt: 1,
    });
    expect(record.output_data).toEqual({
      Result: {
        total: 25,
        squares: [{ Square: { value: 9 } }, { Square: { value: 16 } }, { Square: { value: 25 } }],
        notified: 200,
        stored: 1,
      },
    });
    const states = Object.fromEntries(record.node_states.map((s) => [s.node_name, s]));
    expect(states.SmallOut?.status).toBe('skipped');
    for (const label of ['In', 'Enrich', 'Big?', 'Notify', 'Each', 'Square', 'Sum', 'Store', 'Pause', 'Result']) {
      expect(states[label]).toMatchObject({ status: 'completed', error: null });
      expect(states[label]?.started_at).toEqual(expect.any(String));
      expect(states[label]?.duration_ms).toEqual(expect.any(Number));
    }
    expect(states.Square?.iterations).toBe(3);
    expect(states['Big?']?.output_data).toEqual({ branch: 'true' });
    expect(states.Notify?.input_data).toMatchObject({ Enrich: { amount: 120 } });
    expect(record.graph_snapshot.nodes).toHaveLength(11);
    expect(server.requests.find((r) => r.url === '/notify')?.headers.authorization).toBe('Bearer fixture-token');
    const [rows] = await mysql.query(`select total from ${mysqlTable}`);
    expect(rows).toEqual([{ total: 25 }]);
  });

  test('string inputs and outputs keep their type: plain text and JSON-looking strings are not re-parsed', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'webhook' })
      .node('Echo', 'scriptNode', { code: 'return "42";' })
      .node('Out', 'outputNode')
      .edge('In', 'Echo')
      .edge('Echo', 'Out');
    const process = await register(g.process({ organization_id: org }));
    for (const input of ['hello', '7', '{"a":1}']) {
      const reply = await test_(process.id, input);
      expect(reply.status).toBe(200);
      const record = reply.body as ExecutionRecord;
      expect(record.input_data).toBe(input);
      const echo = record.node_states.find((state) => state.node_name === 'Echo');
      expect(echo?.output_data).toBe('42');
      const read = await harness.call(engineHttp.getExecution, { params: { id: record.id } }, actor);
      expect((read.body as ExecutionRecord).input_data).toBe(input);
    }
  });

  test('the history lists executions newest first without the large fields; the record has them', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Out', 'outputNode')
      .edge('In', 'Out');
    const process = await register(g.process({ organization_id: org }));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await test_(process.id, { i })).body as ExecutionRecord).id);
    const page = await harness.call(
      engineHttp.listExecutions,
      { params: { processId: process.id }, query: { pageSize: '2' } },
      actor,
    );
    expect(page.status).toBe(200);
    const body = page.body as { items: Record<string, unknown>[]; total: number; page: number; pageSize: number };
    expect(body).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(body.items.map((item) => item.id)).toEqual([ids[2], ids[1]]);
    expect(body.items[0]).not.toHaveProperty('node_states');
    expect(body.items[0]).not.toHaveProperty('input_data');
    const filtered = await harness.call(
      engineHttp.listExecutions,
      { params: { processId: process.id }, query: { status: 'failed' } },
      actor,
    );
    expect((filtered.body as { total: number }).total).toBe(0);
    const since = await harness.call(
      engineHttp.listExecutions,
      { params: { processId: process.id }, query: { from: '2000-01-01', to: '2999-01-01T00:00:00.000Z' } },
      actor,
    );
    expect((since.body as { total: number }).total).toBe(3);
    const bad = await harness
      .call(
        engineHttp.listExecutions,
        { params: { processId: process.id }, query: { status: 'weird', from: 'yesterday' } },
        actor,
      )
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({
      problem: { status: 400, errors: [{ path: '/query/status' }, { path: '/query/from' }] },
    });

    const one = await harness.call(engineHttp.getExecution, { params: { id: ids[0]! } }, actor);
    expect((one.body as ExecutionRecord).output_data).toEqual({ Out: { In: { i: 0 } } });
  });

  test('a failing node fails the execution with its error, and the error webhook receives it', async () => {
    const hook = await startLocalHttpServer((_request, res) => json(res, 204, {}));
    try {
      const g = new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Boom', 'scriptNode', { code: 'throw new Error("no luck: " + input.In.n)' })
        .node('Out', 'outputNode')
        .edge('In', 'Boom')
        .edge('Boom', 'Out');
      const process = await register(g.process({ organization_id: org, error_webhook_url: `${hook.url}/errors` }));
      const record = (await test_(process.id, { n: 7 })).body as ExecutionRecord;
      expect(record.status).toBe('failed');
      expect(record.error_message).toContain('no luck: 7');
      const states = Object.fromEntries(record.node_states.map((s) => [s.node_name, s]));
      expect(states.Boom).toMatchObject({ status: 'failed', error: expect.stringContaining('no luck: 7') });
      expect(states.Out?.status).toBe('pending');
      await waitUntil(() => hook.requests.length > 0);
      expect(hook.requests).toHaveLength(1);
      expect(JSON.parse(hook.requests[0]!.body)).toEqual({
        processId: process.id,
        executionId: record.id,
        status: 'failed',
        error: expect.stringContaining('no luck: 7'),
        failedNode: {
          id: g.id('Boom'),
          name: 'Boom',
          type: 'scriptNode',
          error: expect.stringContaining('no luck: 7'),
        },
        attempt: 1,
        traceId: null,
      });
    } finally {
      await hook.close();
    }
  });

  test('with max_retries the execution is retried from the failed node, keeping completed outputs', async () => {
    flakyFailures = 1;
    const before = counterHits;
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Count', 'integrationNode', { url: `${server.url}/counter` })
      .node('Flaky', 'integrationNode', { url: `${server.url}/flaky`, retries: 0 })
      .node('Out', 'outputNode', { fields: { hit: '{{input["Count"]["body"]["hit"]}}' } })
      .edge('In', 'Count')
      .edge('Count', 'Flaky')
      .edge('Flaky', 'Out');
    const process = await register(g.process({ organization_id: org, max_retries: 2 }));
    const record = (await test_(process.id, {})).body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'completed', attempt: 2 });
    expect(counterHits - before).toBe(1);
    expect(record.output_data).toEqual({ Out: { hit: before + 1 } });
    const events = await harness.store.readStream(`execution-${record.id}`);
    expect(
      events.filter((e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === g.id('Count')),
    ).toHaveLength(1);
    expect(
      events.filter((e) => e.type === 'NodeStarted' && (e.data as { nodeId: string }).nodeId === g.id('Flaky')),
    ).toHaveLength(2);
    expect(events.find((e) => e.type === 'ExecutionRetryScheduled')?.data).toMatchObject({
      attempt: 2,
      failedNodeId: g.id('Flaky'),
    });
  });

  test('an execution outlasting timeout_seconds times out and its running node is cancelled', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Long', 'waitNode', { seconds: 60 })
      .node('Out', 'outputNode')
      .edge('In', 'Long')
      .edge('Long', 'Out');
    const process = await register(g.process({ organization_id: org, timeout_seconds: 1 }));
    const record = (await test_(process.id, {})).body as ExecutionRecord;
    expect(record.status).toBe('timeout');
    expect(record.error_message).toContain('timeout of 1 s');
    expect(record.node_states.find((s) => s.node_name === 'Long')?.status).toBe('cancelled');
  });

  test('a long execution answers 202, then cancel stops it; a second cancel is a conflict', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Long', 'waitNode', { seconds: 60 })
      .edge('In', 'Long');
    const process = await register(g.process({ organization_id: org }));
    const accepted = await test_(process.id, {}, { waitSeconds: '0' });
    expect(accepted.status).toBe(202);
    const { execution_id } = accepted.body as { execution_id: string };
    const nodeStatus = async (): Promise<string | undefined> => {
      const reply = await harness
        .call(engineHttp.getExecution, { params: { id: execution_id } }, actor)
        .catch(() => undefined);
      return (reply?.body as ExecutionRecord | undefined)?.node_states.find((s) => s.node_name === 'Long')?.status;
    };
    await waitUntil(async () => (await nodeStatus()) === 'running');
    expect(await nodeStatus()).toBe('running');
    const cancelled = await harness.call(engineHttp.cancelExecution, { params: { id: execution_id } }, actor);
    expect(cancelled.body).toMatchObject({ status: 'cancelled' });
    const again = await harness
      .call(engineHttp.cancelExecution, { params: { id: execution_id } }, actor)
      .catch((e: unknown) => e);
    expect(again).toMatchObject({ problem: { status: 409 } });
  });

  test('a script that loops forever fails its execution and the engine stays healthy', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Spin', 'scriptNode', { code: 'while (true) {}', timeoutMs: 200 })
      .edge('In', 'Spin');
    const spin = await register(g.process({ organization_id: org }));
    const record = (await test_(spin.id, {})).body as ExecutionRecord;
    expect(record).toMatchObject({ status: 'failed', error_message: expect.stringContaining('timed out') });
    const ok = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Fine', 'scriptNode', { code: 'return 42' })
      .edge('In', 'Fine');
    const fine = await register(ok.process({ organization_id: org }));
    // The whole record on failure: its error_message says why.
    expect((await test_(fine.id, {})).body).toMatchObject({ status: 'completed', error_message: null });
  });

  test('a script returning what JSON cannot hold fails alone; executions committed with it are unharmed', async () => {
    const bad = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Big', 'scriptNode', { code: 'return { n: 10n }' })
      .edge('In', 'Big');
    const good = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Fine', 'scriptNode', { code: 'return { at: new Date(0) }' })
      .node('Out', 'outputNode')
      .edge('In', 'Fine')
      .edge('Fine', 'Out');
    const badProcess = await register(bad.process({ organization_id: org }));
    const goodProcess = await register(good.process({ organization_id: org }));
    const replies = await Promise.all([
      test_(badProcess.id, {}),
      ...Array.from({ length: 5 }, () => test_(goodProcess.id, {})),
    ]);
    const [failed, ...completed] = replies.map((reply) => reply.body as ExecutionRecord);
    expect(failed).toMatchObject({ status: 'failed', error_message: expect.stringContaining('BigInt') });
    for (const record of completed) {
      expect(record).toMatchObject({
        status: 'completed',
        output_data: { Out: { Fine: { at: '1970-01-01T00:00:00.000Z' } } },
      });
    }
  });

  test('a script cancelled by the execution timeout stops spinning and the next script runs at once', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Spin', 'scriptNode', { code: 'while (true) {}', timeoutMs: 120_000 })
      .edge('In', 'Spin');
    const spin = await register(g.process({ organization_id: org, timeout_seconds: 1 }));
    expect(((await test_(spin.id, {})).body as ExecutionRecord).status).toBe('timeout');
    const ok = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Fine', 'scriptNode', { code: 'return 42', timeoutMs: 5000 })
      .edge('In', 'Fine');
    const fine = await register(ok.process({ organization_id: org }));
    const record = (await test_(fine.id, {}, { waitSeconds: '10' })).body as ExecutionRecord;
    expect({ status: record.status, error: record.error_message }).toEqual({ status: 'completed', error: null });
  });

  test('stats count runs per status with success rate, durations and failure breakdown', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Check', 'scriptNode', {
        // `spinMs` spreads the durations so an average and a 95th percentile differ from min and max.
        code: 'const end = Date.now() + input.In.spinMs; while (Date.now() < end) {} if (input.In.fail) throw new Error("bad input"); return 1;',
      })
      .edge('In', 'Check');
    const process = await register(g.process({ organization_id: org }));
    const runs: ExecutionRecord[] = [];
    for (const [fail, spinMs] of [
      [false, 0],
      [false, 40],
      [false, 120],
      [true, 10],
    ] as const)
      runs.push((await test_(process.id, { fail, spinMs })).body as ExecutionRecord);
    const reply = await harness.call(engineHttp.executionStats, { params: { processId: process.id } }, actor);
    const stats = reply.body as ExecutionStats;
    expect(stats).toMatchObject({ total_runs: 4, completed: 3, failed: 1, running: 0, success_rate: 0.75 });
    // The figures are those of the runs' own recorded durations (the average exact, the p95 as percentile_cont(0.95)).
    const durations = runs.map((run) => run.duration_ms!).sort((a, b) => a - b);
    const average = durations.reduce((sum, ms) => sum + ms, 0) / durations.length;
    const rank = 0.95 * (durations.length - 1);
    const low = durations[Math.floor(rank)]!;
    const p95 = low + (rank - Math.floor(rank)) * (durations[Math.ceil(rank)]! - low);
    expect(durations[3]! - durations[0]!).toBeGreaterThan(0);
    expect(stats.average_duration_seconds).toBeCloseTo(Math.round(average) / 1000, 3);
    // The p95 comes from the duration histogram: exact under 128 ms, within 0.8 % of a bucket's
    // midpoint above (docs/engine.md), plus the answer's rounding to whole milliseconds.
    expect(Math.abs(stats.p95_duration_seconds - p95 / 1000)).toBeLessThanOrEqual(0.001 + (0.008 * p95) / 1000);
    expect(stats.failure_breakdown.by_node).toEqual([{ node_id: g.id('Check'), node_name: 'Check', count: 1 }]);
    expect(stats.failure_breakdown.by_error).toEqual([
      { error_message: expect.stringContaining('bad input'), count: 1 },
    ]);
  });

  test('bad requests change nothing: unknown input node 400, unknown or foreign process 404, foreign execution 404', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Out', 'outputNode')
      .edge('In', 'Out');
    const process = await register(g.process({ organization_id: org }));
    const bad = await test_(process.id, {}, { inputNodeId: g.id('Out') }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ problem: { status: 400, errors: [{ path: '/query/inputNodeId' }] } });
    const list = await harness.call(engineHttp.listExecutions, { params: { processId: process.id } }, actor);
    expect((list.body as { total: number }).total).toBe(0);

    const missing = await test_(crypto.randomUUID(), {}).catch((e: unknown) => e);
    expect(missing).toMatchObject({ problem: { status: 404 } });
    const stranger = actorOf(crypto.randomUUID());
    const foreign = await harness
      .call(engineHttp.testProcess, { params: { processId: process.id }, body: {} }, stranger)
      .catch((e: unknown) => e);
    expect(foreign).toMatchObject({ problem: { status: 404 } });

    const record = (await test_(process.id, {})).body as ExecutionRecord;
    const peek = await harness
      .call(engineHttp.getExecution, { params: { id: record.id } }, stranger)
      .catch((e: unknown) => e);
    expect(peek).toMatchObject({ problem: { status: 404 } });
    const restricted = actorOf(org, { processIds: [crypto.randomUUID()] });
    const denied = await harness
      .call(engineHttp.getExecution, { params: { id: record.id } }, restricted)
      .catch((e: unknown) => e);
    expect(denied).toMatchObject({ problem: { status: 403 } });
    // An empty list (as stored for keys issued before the gateway refused it) grants nothing.
    const none = actorOf(org, { processIds: [] });
    const deniedToNone = await harness
      .call(engineHttp.getExecution, { params: { id: record.id } }, none)
      .catch((e: unknown) => e);
    expect(deniedToNone).toMatchObject({ problem: { status: 403 } });
    const malformed = await harness
      .call(engineHttp.getExecution, { params: { id: 'not-a-uuid' } }, actor)
      .catch((e: unknown) => e);
    expect(malformed).toMatchObject({ problem: { status: 404 } });
  });
});
