import { engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { sql } from 'kysely';
import { listExecutions } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { waitUntil } from './support/wait-until.js';

/**
 * PostgreSQL's jsonb (and PGlite's) refuses U+0000 and lone surrogates that JSON itself allows.
 * Such a value must fail only where it arises: a 400 for HTTP input, a failed node for an output,
 * never the group commit it shares with other executions (which would stall and re-run them).
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)('values the database cannot store (%s)', (mode) => {
  let harness: EngineHarness;
  let server: LocalHttpServer;
  let hits = 0;
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    server = await startLocalHttpServer((_request, res) => json(res, 200, { hit: ++hits }));
    harness = await startEngineHarness(mode);
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const run = (processId: string, body: unknown) =>
    harness.call(engineHttp.testProcess, { params: { processId }, query: { waitSeconds: '60' }, body }, actor);
  const register = (g: GraphBuilder): Promise<ProcessRecord> =>
    harness.catalog.add(g.process({ organization_id: org }));

  test.each([
    ['a NUL character in a value', { a: 'x\u0000y' }, '/a'],
    ['a NUL character in a key', { nested: [{ 'k\u0000': 1 }] }, '/nested/0/k\u0000'],
    ['a lone high surrogate', { a: ['ok', '\ud800'] }, '/a/1'],
    ['a lone low surrogate in a key', { '\udc00': true }, '/\udc00'],
  ])('test input holding %s is a 400 naming where, and starts nothing', async (_name, body, path) => {
    const process = await register(new GraphBuilder().node('In', 'inputNode', { triggerType: 'manual' }));
    const refused = await run(process.id, body).catch((error: unknown) => error);
    expect(refused).toMatchObject({ problem: { status: 400, errors: [{ path }] } });
    expect((await listExecutions(harness.store.db, process.id, { page: 1, pageSize: 10 })).total).toBe(0);
  });

  test('a node output the database cannot store fails that node; executions sharing its commits run each node once', async () => {
    const healthy = await register(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Hit', 'integrationNode', { url: `${server.url}/hit` })
        .node('Out', 'outputNode')
        .edge('In', 'Hit')
        .edge('Hit', 'Out'),
    );
    const poisons = [
      'return "a\\0b";',
      'return { ["k\\0"]: 1 };',
      'return { text: "\\ud800" };',
      'return [{ deep: { "\\udfff": "x" } }];',
    ];
    const poisoned = await Promise.all(
      poisons.map((code) =>
        register(
          new GraphBuilder()
            .node('In', 'inputNode', { triggerType: 'manual' })
            .node('Bad', 'scriptNode', { code })
            .node('Out', 'outputNode')
            .edge('In', 'Bad')
            .edge('Bad', 'Out'),
        ),
      ),
    );
    const healthyCount = 12;
    const before = hits;
    const replies = await Promise.all([
      ...Array.from({ length: healthyCount }, (_, i) => run(healthy.id, { i })),
      ...poisoned.map((process) => run(process.id, {})),
    ]);
    const records = replies.map((reply) => reply.body as ExecutionRecord);
    expect(records.slice(0, healthyCount).map((r) => r.status)).toEqual(Array(healthyCount).fill('completed'));
    expect(hits - before).toBe(healthyCount);
    for (const record of records.slice(healthyCount)) {
      expect(record.status).toBe('failed');
      expect(record.error_message).toMatch(/^Bad: output contains (a NUL character|a lone surrogate)/);
      const bad = record.node_states.find((s) => s.node_name === 'Bad');
      expect(bad).toMatchObject({ status: 'failed', error: expect.stringMatching(/cannot store/) });
    }
  });

  test('a NUL or lone surrogate in an error message is stored replaced, and the node fails with it', async () => {
    const process = await register(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Boom', 'scriptNode', { code: 'throw new Error("bad\\0byte \\ud800 here");' })
        .edge('In', 'Boom'),
    );
    const record = (await run(process.id, {})).body as ExecutionRecord;
    expect(record.status).toBe('failed');
    expect(record.error_message).toBe('Boom: script failed: bad\ufffdbyte \ufffd here');
    expect(record.node_states.find((s) => s.node_name === 'Boom')?.error).toContain('bad\ufffdbyte \ufffd here');
  });

  test('events the database refuses for another reason fail only their execution, recorded without the refused data', async () => {
    // A real refusal the node checks cannot foresee: a CHECK constraint on the event table.
    await sql`ALTER TABLE events ADD CONSTRAINT no_marked_events CHECK (data::text NOT LIKE '%refuse-me%') NOT VALID`.execute(
      harness.store.db,
    );
    try {
      const healthy = await register(
        new GraphBuilder()
          .node('In', 'inputNode', { triggerType: 'manual' })
          .node('Hit', 'integrationNode', { url: `${server.url}/hit` })
          .edge('In', 'Hit'),
      );
      const marked = await register(
        new GraphBuilder()
          .node('In', 'inputNode', { triggerType: 'manual' })
          .node('Mark', 'scriptNode', { code: 'return { note: "refuse" + "-me" };' })
          .node('After', 'scriptNode', { code: 'return 1;' })
          .edge('In', 'Mark')
          .edge('Mark', 'After'),
      );
      const before = hits;
      const replies = await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => run(healthy.id, { i })),
        run(marked.id, {}),
        run(marked.id, {}),
      ]);
      const records = replies.map((reply) => reply.body as ExecutionRecord);
      expect(records.slice(0, 8).map((r) => r.status)).toEqual(Array(8).fill('completed'));
      expect(hits - before).toBe(8);
      for (const record of records.slice(8)) {
        expect(record.status).toBe('failed');
        expect(record.error_message).toMatch(/^Mark: the database refused to store the result \(SQLSTATE 23514: /);
        const states = Object.fromEntries(record.node_states.map((state) => [state.node_name, state.status]));
        expect(states).toEqual({ In: 'completed', Mark: 'failed', After: 'pending' });
        const events = await harness.store.readStream(`execution-${record.id}`);
        expect(events.at(-1)?.type).toBe('ExecutionFailed');
      }
    } finally {
      await sql`ALTER TABLE events DROP CONSTRAINT no_marked_events`.execute(harness.store.db);
    }
  });

  test("an error webhook's answer holding a NUL or a split surrogate pair is recorded replaced", async () => {
    // 199 characters, then an emoji whose pair the 200-character excerpt cuts in half.
    const answer = `no\u0000pe${'.'.repeat(194)}😀😀`;
    const hook = await startLocalHttpServer((_request, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(answer);
    });
    try {
      const process = await harness.catalog.add(
        new GraphBuilder()
          .node('In', 'inputNode', { triggerType: 'manual' })
          .node('Boom', 'scriptNode', { code: 'throw new Error("boom");' })
          .edge('In', 'Boom')
          .process({ organization_id: org, error_webhook_url: `${hook.url}/errors` }),
      );
      const { id } = (await run(process.id, {})).body as ExecutionRecord;
      const record = async () =>
        (await harness.call(engineHttp.getExecution, { params: { id } }, actor)).body as ExecutionRecord;
      // On a loaded machine a first attempt can time out (`retrying`); the answer comes with a later one.
      const answered = async () => (await record()).error_webhook_deliveries.find((d) => d.outcome !== 'retrying');
      await waitUntil(async () => (await answered()) !== undefined, 30_000);
      const delivery = await answered();
      expect(delivery).toMatchObject({ outcome: 'abandoned', http_status: 400 });
      expect(delivery?.error).toContain('no\ufffdpe');
      expect(delivery?.error?.endsWith('\ufffd')).toBe(true);
    } finally {
      await hook.close();
    }
  });
});
