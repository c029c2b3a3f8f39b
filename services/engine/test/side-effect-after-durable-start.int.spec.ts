import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';

const modes: EngineMode[] = ['embedded', 'distributed'];

/**
 * A node that acts outside the execution (here an HTTP call) runs only once its NodeStarted is
 * durable: a SIGKILL in the middle of the call then leaves the start on record, so a repeat of
 * the call on resume shows as a second start, never as a call the log does not know about.
 */
describe.each(modes)('a call outside the execution follows its durable start (%s)', (mode) => {
  let harness: EngineHarness;
  let server: LocalHttpServer;
  /** For each call the server saw (executions run one after another): how many starts of Call were stored. */
  const storedStartsAtCall: number[] = [];

  beforeAll(async () => {
    // A hold longer than the test: the start is on record because the call needs it, not because time ran out.
    harness = await startEngineHarness(mode, { syncRunHoldMs: 60_000 });
    server = await startLocalHttpServer(async (_request, res) => {
      const { rows } = await sql<{ n: string }>`
        SELECT count(*) AS n FROM events WHERE type = 'NodeStarted' AND data->>'nodeName' = 'Call'`.execute(
        harness.database.db,
      );
      storedStartsAtCall.push(Number(rows[0]?.n));
      json(res, 200, { ok: true });
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  test('every call finds its NodeStarted in the event store', async () => {
    const org = crypto.randomUUID();
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Prepare', 'scriptNode', { code: 'return { n: 1 };' })
      .node('Call', 'integrationNode', { url: `${server.url}/effect` })
      .node('Out', 'outputNode', {})
      .edge('In', 'Prepare')
      .edge('Prepare', 'Call')
      .edge('Call', 'Out');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    for (let n = 0; n < 5; n++) {
      const reply = await harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, body: { n } },
        actorOf(org),
      );
      expect(reply.status).toBe(200);
      expect((reply.body as ExecutionRecord).status).toBe('completed');
    }
    expect(storedStartsAtCall).toEqual([1, 2, 3, 4, 5]);
  });
});
