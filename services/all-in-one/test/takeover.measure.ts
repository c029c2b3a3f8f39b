import pg from 'pg';
import { startDeployment, type Deployment } from './support/deployment.js';

/**
 * Measures engine takeover (docs/engine.md, "Takeover time"): WEFT_TAKEOVER_EXECUTIONS (1000)
 * executions in flight (each in a long wait) on one engine process, SIGKILLed; a second engine
 * process resumes them. Prints the time from the kill to the first and the last ExecutionResumed.
 * Run (distributed only, after `pnpm build`):
 *   WEFT_E2E_DEPLOYMENT=distributed WEFT_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/weft_test \
 *     node node_modules/jest/bin/jest.js --testRegex 'takeover\.measure\.ts$'
 */
const EXECUTIONS = Number(process.env.WEFT_TAKEOVER_EXECUTIONS ?? 1000);
const LEASE_MS = Number(process.env.WEFT_TAKEOVER_LEASE_MS ?? 15_000);

const count = async (db: pg.Client, query: string): Promise<number> => Number((await db.query(query)).rows[0].n);

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('measurement timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test(`takeover of ${EXECUTIONS} executions after a SIGKILL`, async () => {
  const deployment: Deployment = await startDeployment({
    engines: 1,
    env: {
      WEFT_ENGINE_MAX_RUNNING_EXECUTIONS: String(EXECUTIONS * 2),
      WEFT_ENGINE_LEASE_MS: String(LEASE_MS),
      // Kept in memory (not parked): the killed engine holds every lease.
      WEFT_WAIT_PARK_AFTER_SECONDS: '3600',
    },
  });
  const db = new pg.Client({ connectionString: deployment.databaseUrl });
  try {
    await db.connect();
    const org = await deployment.call('POST', '/api/v1/organizations', { name: 'takeover' });
    const created = await deployment.call('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'long wait',
      nodes: [
        { id: 'in', type: 'inputNode', position: { x: 0, y: 0 }, config: { label: 'In', triggerType: 'manual' } },
        { id: 'wait', type: 'waitNode', position: { x: 1, y: 0 }, config: { label: 'Wait', seconds: 240 } },
        { id: 'out', type: 'outputNode', position: { x: 2, y: 0 }, config: { label: 'Out' } },
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'wait' },
        { source_node_id: 'wait', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    for (let sent = 0; sent < EXECUTIONS; sent += 50) {
      const batch = Array.from({ length: Math.min(50, EXECUTIONS - sent) }, () =>
        deployment.call('POST', `/api/v1/processes/test/${created.body.id}?waitSeconds=0`, {}),
      );
      for (const reply of await Promise.all(batch)) expect(reply.status).toBe(202);
    }
    await until(
      async () =>
        (await count(
          db,
          `SELECT count(*) AS n FROM engine_node_states WHERE node_type = 'waitNode' AND status = 'running'`,
        )) === EXECUTIONS,
      120_000,
    );
    deployment.add('engine-2', 'engine');
    await new Promise((r) => setTimeout(r, 5000));
    const killedAt = Date.now();
    await deployment.kill('engine-1');
    let first: number | undefined;
    await until(async () => {
      const resumed = await count(db, `SELECT count(*) AS n FROM events WHERE type = 'ExecutionResumed'`);
      if (resumed > 0) first ??= Date.now() - killedAt;
      return resumed >= EXECUTIONS;
    }, 180_000);
    const last = Date.now() - killedAt;
    process.stdout.write(
      `takeover of ${EXECUTIONS} executions, lease ${LEASE_MS} ms: first resumed after ${first} ms, all after ${last} ms\n`,
    );
    expect(await count(db, `SELECT count(*) AS n FROM events WHERE type = 'ExecutionResumed'`)).toBe(EXECUTIONS);
  } finally {
    await db.end();
    await deployment.stop();
  }
}, 600_000);
