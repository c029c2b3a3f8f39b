import { engineHttp } from '@weft/contracts';
import { openDatabase } from '@weft/event-store';
import { sql } from 'kysely';
import { findExecution } from '../src/projections/execution-queries.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { testDatabaseUrl } from './support/test-services.js';
import { waitUntil } from './support/wait-until.js';

/**
 * An engine that stops gracefully (a deploy) hands its runs over as parked and due at once: the
 * next engine takes them up without waiting for a lease to lapse, and such hand-overs do not
 * count toward WEFT_ENGINE_MAX_RESUMES, which is for engines that keep dying.
 */
describe('graceful hand-over between engines (PostgreSQL + NATS)', () => {
  const schema = `test_engine_handover_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const org = crypto.randomUUID();
  let harness: EngineHarness | undefined;

  afterAll(async () => {
    await harness?.close();
    const owner = await openDatabase({ url: testDatabaseUrl() });
    await sql.raw(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).execute(owner.db);
    await owner.close();
  });

  test('four restarts in a row during one node do not fail the execution', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Pause', 'waitNode', { seconds: 30 })
      .node('Out', 'outputNode')
      .edge('In', 'Pause')
      .edge('Pause', 'Out');
    // A lease far longer than the test: only the hand-over can move the run between engines.
    const options = { leaseMs: 120_000, maintenanceMs: 200 };
    harness = await startEngineHarness('distributed', options, { schema });
    const process_ = await harness.catalog.add(g.process({ organization_id: org }));
    const reply = await harness.call(
      engineHttp.testProcess,
      { params: { processId: process_.id }, query: { waitSeconds: '0' }, body: {} },
      actorOf(org),
    );
    const id = (reply.body as { execution_id: string }).execution_id;
    await waitUntil(() => harness!.engine.runtime.engine.isRunningHere(id));
    for (let restart = 0; restart < 4; restart++) {
      await harness.close();
      harness = await startEngineHarness('distributed', options, { schema });
      await waitUntil(() => harness!.engine.runtime.engine.isRunningHere(id), 20_000);
    }
    const types = (await harness.store.readStream(`execution-${id}`)).map((e) => e.type);
    expect(types.filter((t) => t === 'ExecutionParked')).toHaveLength(4);
    expect(types.filter((t) => t === 'ExecutionResumed')).toHaveLength(4);
    expect((await findExecution(harness.database.db, id))?.status).toBe('running');
  });
});
