import { engineHttp } from '@weft/contracts';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';

/**
 * a synchronous test run whose ExecutionStarted exceeds WEFT_EVENT_MAX_BYTES is
 * refused (413) by startNow after its ExecutionAccepted was executed on the run. The accepted
 * event must not reach the store (it would read `queued` and count as running for ever).
 * Held (the change) and not held (as before it).
 */
describe.each([
  ['held', 100],
  ['not held', 0],
])('a synchronous run whose start is too large (%s)', (_name, syncRunHoldMs) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness('embedded', {
      syncRunHoldMs: syncRunHoldMs,
      eventLimits: { maxEventBytes: 4096, valueInlineMaxBytes: 1024 * 1024 },
    });
  });
  afterAll(() => harness.close());

  test('is refused with 413 and leaves no ExecutionAccepted behind', async () => {
    const process = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode')
        .edge('In', 'Out')
        .process({ organization_id: org }),
    );
    const status = await harness
      .call(engineHttp.testProcess, { params: { processId: process.id }, body: { text: 't'.repeat(10_000) } }, actor)
      .then(
        (reply) => reply.status,
        (error: { status?: number }) => error.status ?? -1,
      );
    expect(status).toBe(413);
    // The hold (100 ms) runs out; the lazy append of an unheld run goes within 10 ms.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await harness.engine.runtime.engine.stop();
    const { rows } = await sql<{ status: string; queued: boolean }>`
      SELECT status, queued FROM engine_executions WHERE process_id = ${process.id}`.execute(harness.database.db);
    expect(rows).toEqual([]);
  });
});
