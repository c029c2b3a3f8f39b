import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { engineHttp } from '@weft/contracts';
import { NatsBus } from '@weft/bus';
import { namespacedBus } from '@weft/test-support';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { namespaceOfQueue } from './support/queue-namespace.js';
import { sharedEngineQueue } from './support/shared-engine-queue.js';
import { killHard, spawnEngineChild } from './support/spawn-engine-child.js';
import { startDistributedTestCatalog, type TestCatalog } from './support/test-catalog.js';
import { openDatabase, type Database } from '@weft/event-store';
import { testDatabaseUrl, testNatsUrl } from './support/test-services.js';

/** CPU seconds a process has used, all its threads (utime + stime from /proc). */
const cpuSeconds = (pid: number): number =>
  readdirSync(`/proc/${pid}/task`).reduce((sum, task) => {
    const fields = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) / 100;
  }, 0);

/**
 * An engine SIGKILLed while it holds a synchronous run (its script still running, nothing on
 * record): the run is gone as if never requested. Its caller got no answer, no event or row of it
 * exists, and the engine that takes over finds nothing to resume.
 */
describe('SIGKILL during a held synchronous run (PostgreSQL + NATS)', () => {
  const { schema, queue, dispose } = sharedEngineQueue('hold');
  let child: ChildProcess | undefined;
  let survivor: EngineHarness | undefined;
  let catalog: TestCatalog | undefined;
  let reader: Database | undefined;

  afterAll(async () => {
    await reader?.close();
    if (child) await killHard(child);
    await survivor?.close();
    await catalog?.stop();
    await dispose();
  });

  test('leaves nothing on record and nothing to resume', async () => {
    const actor = actorOf(crypto.randomUUID());
    catalog = await startDistributedTestCatalog(schema, queue.durable);
    const process_ = await catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Spin', 'scriptNode', {
          code: 'const end = Date.now() + 50000; while (Date.now() < end) {} return 1;',
          timeoutMs: 60_000,
        })
        .node('Out', 'outputNode')
        .edge('In', 'Spin')
        .edge('Spin', 'Out')
        .process({ organization_id: actor.organizationId, timeout_seconds: 60 }),
    );
    reader = await openDatabase({ url: testDatabaseUrl(), schema });
    child = await spawnEngineChild({ schema, queue, leaseMs: 1000, env: { CHILD_SYNC_RUN_HOLD_MS: '60000' } });
    const pid = child.pid!;

    const bus = namespacedBus(await NatsBus.connect({ servers: testNatsUrl() }), namespaceOfQueue(queue.durable));
    const answer = bus
      .request(
        engineHttp.testProcess,
        { params: { processId: process_.id }, query: { waitSeconds: '60' }, body: {}, headers: {} },
        { actor, timeoutMs: 30_000 },
      )
      .then(
        () => 'answered',
        () => 'no answer',
      );
    // The script spins on the child's isolate thread: the child burns CPU once the run is in it.
    const spinning = async (): Promise<boolean> => {
      const before = cpuSeconds(pid);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // Idle, the child uses about 0.02 s a second; spinning, a core's worth when it gets one.
      return cpuSeconds(pid) - before > 0.3;
    };
    let running = false;
    for (let attempt = 0; attempt < 15 && !running; attempt++) running = await spinning();
    expect(running).toBe(true);
    const onRecord = async (): Promise<number> =>
      Number(
        (
          await sql<{ n: string }>`
            SELECT count(*) AS n FROM events WHERE stream_id LIKE 'execution-%'
            AND metadata->>'processId' = ${process_.id}`.execute(reader!.db)
        ).rows[0]!.n,
      );
    expect(await onRecord()).toBe(0);

    await killHard(child);
    child = undefined;
    // The caller never hears back (its request fails when its bus closes).
    const settled = await Promise.race([answer, new Promise((resolve) => setTimeout(() => resolve('waiting'), 1000))]);
    expect(settled).not.toBe('answered');
    await bus.close();
    expect(await answer).toBe('no answer');

    // A survivor that would resume any orphan within a lease and a scan: there is none.
    survivor = await startEngineHarness('distributed', { leaseMs: 1000 }, { schema, queue });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await onRecord()).toBe(0);
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM engine_executions WHERE process_id = ${process_.id}`.execute(survivor.store.db);
    expect(Number(rows[0]!.n)).toBe(0);
  });
});
