import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { RELAY_LOCK_NAMESPACE } from '@weft/event-store';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

/**
 * Distributed chaos: under a steady load of executions (each with one side effect), an engine,
 * then the outbox relay's leader, then the process catalog are SIGKILLed and restarted. Every
 * accepted request completes, no completed node runs again, each side effect happens once (more
 * only for a call in flight at the kill, which the docs promise at least once), and JetStream
 * WEFT_EVENTS holds exactly one message per stored event.
 */
const describeDistributed = deploymentKind() === 'distributed' ? describe : describe.skip;

const node = (id: string, type: string, x: number, config: Record<string, unknown>) => ({
  id,
  type,
  position: { x, y: 0 },
  config,
});

describeDistributed('chaos: processes of a distributed Weft SIGKILLed under load', () => {
  let deployment: Deployment;
  let sideEffects: Server;
  let sideEffectUrl: string;
  const hits = new Map<string, number>();

  beforeAll(async () => {
    sideEffects = createServer((request, response) => {
      const token = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('token') ?? 'none';
      hits.set(token, (hits.get(token) ?? 0) + 1);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((done) => sideEffects.listen(0, '127.0.0.1', done));
    sideEffectUrl = `http://127.0.0.1:${(sideEffects.address() as { port: number }).port}`;
    // Short leases, so a killed engine's executions move within seconds.
    deployment = await startDeployment({ env: { WEFT_ENGINE_LEASE_MS: '3000' } });
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await deployment?.stop();
    await new Promise((r) => sideEffects?.close(r));
  });

  /** The process holding the relay's leader lock: its PostgreSQL session's client port, owned by which child. */
  const relayLeader = async (db: pg.Client): Promise<string | undefined> => {
    const { rows } = await db.query(
      `SELECT a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::oid
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [RELAY_LOCK_NAMESPACE],
    );
    const port = rows[0]?.client_port as number | undefined;
    if (!port) return undefined;
    const sockets = execFileSync('ss', ['-Htnp', 'state', 'established', `( sport = :${port} )`]).toString();
    const pid = Number(/pid=(\d+)/.exec(sockets)?.[1]);
    return deployment.names().find((name) => deployment.pid(name) === pid);
  };

  test('an engine, the relay leader and the catalog die in turn; nothing accepted is lost or done twice', async () => {
    const system = deployment.call;
    const org = await system('POST', '/api/v1/organizations', { name: 'Chaos' });
    const created = await system('POST', `/api/v1/processes/by-org/${org.body.id}`, {
      name: 'wait and record',
      nodes: [
        node('in', 'inputNode', 0, { label: 'In', triggerType: 'manual' }),
        node('wait', 'waitNode', 1, { label: 'Wait', seconds: 2 }),
        node('hit', 'integrationNode', 2, {
          label: 'Record',
          method: 'POST',
          url: `${sideEffectUrl}/hit`,
          query: { token: '{{input["In"]["token"]}}' },
        }),
        node('out', 'outputNode', 3, { label: 'Out' }),
      ],
      edges: [
        { source_node_id: 'in', target_node_id: 'wait' },
        { source_node_id: 'wait', target_node_id: 'hit' },
        { source_node_id: 'hit', target_node_id: 'out' },
      ],
    });
    expect(created.status).toBe(201);
    const processId = created.body.id as string;

    // Steady load: a request every 50 ms; only those answered 202 were accepted (others may see 503, or no gateway).
    const accepted = new Map<string, string>();
    let loading = true;
    const load = (async () => {
      for (let n = 0; loading; n++) {
        const token = `t${n}-${crypto.randomUUID()}`;
        const reply = await system('POST', `/api/v1/processes/test/${processId}?waitSeconds=0`, { token }).catch(
          () => undefined,
        );
        if (reply?.status === 202) accepted.set(reply.body.execution_id as string, token);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const db = new pg.Client({ connectionString: deployment.databaseUrl });
    await db.connect();
    try {
      const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
      await settle(3000);
      await deployment.kill('engine-1');
      await settle(2000);
      await deployment.restart('engine-1');
      await settle(3000);
      // After the engine's restart the relay lock may be between holders for a moment: wait for one.
      let leader = await relayLeader(db);
      for (let tries = 0; !leader && tries < 150; tries += 1) {
        await settle(200);
        leader = await relayLeader(db);
      }
      expect(leader).toBeDefined();
      await deployment.kill(leader!);
      await settle(2000);
      await deployment.restart(leader!);
      await settle(3000);
      await deployment.kill('catalog');
      await settle(2000);
      await deployment.restart('catalog');
      await settle(4000);
      // A loaded machine answers fewer requests in that time: load on until enough were accepted.
      for (let waited = 0; accepted.size <= 20 && waited < 60_000; waited += 200) await settle(200);
      loading = false;
      await load;
      expect(accepted.size).toBeGreaterThan(20);

      // Every accepted request completes (read over HTTP, once the gateway is back).
      const user = client(deployment.baseUrl, deployment.key);
      const deadline = Date.now() + 120_000;
      const pending = new Set(accepted.keys());
      while (pending.size > 0 && Date.now() < deadline) {
        for (const id of [...pending]) {
          const record = await user('GET', `/api/v1/processes/execution/${id}`).catch(() => undefined);
          if (record?.status === 200 && record.body.status !== 'running') {
            expect(record.body.status).toBe('completed');
            pending.delete(id);
          }
        }
        if (pending.size > 0) await settle(500);
      }
      expect([...pending]).toEqual([]);

      // The engine's kill took executions with it (else the checks below would hold vacuously): some were resumed.
      const resumed = await db.query(`SELECT count(*) AS n FROM events WHERE type = 'ExecutionResumed'`);
      expect(Number(resumed.rows[0].n)).toBeGreaterThan(0);

      // No completed node ran again.
      const repeated = await db.query(
        `SELECT stream_id, data->>'nodeId' AS node, count(*) AS n FROM events
          WHERE type = 'NodeCompleted' GROUP BY 1, 2, data->'iteration' HAVING count(*) > 1`,
      );
      expect(repeated.rows).toEqual([]);
      // Each side effect once; a call in flight when its engine died may repeat, once per start of its node.
      const starts = await db.query(
        `SELECT substring(stream_id from 11) AS id, count(*) AS n FROM events
          WHERE type = 'NodeStarted' AND data->>'nodeName' = 'Record' GROUP BY 1`,
      );
      const recordStarts = new Map(starts.rows.map((row) => [String(row.id), Number(row.n)]));
      for (const [id, token] of accepted) {
        expect(hits.get(token) ?? 0).toBeGreaterThanOrEqual(1);
        expect(hits.get(token)).toBeLessThanOrEqual(recordStarts.get(id) ?? 1);
        if ((recordStarts.get(id) ?? 1) === 1) expect(hits.get(token)).toBe(1);
      }

      // The relay published every stored event exactly once (messages are deduplicated by event id).
      const total = Number((await db.query('SELECT count(*) AS n FROM events')).rows[0].n);
      const subscriber = await deployment.connectNatsAs('subscriber');
      try {
        const jsm = await jetstreamManager(subscriber.connection);
        let published = 0;
        const until = Date.now() + 60_000;
        while (Date.now() < until) {
          published = (await jsm.streams.info('WEFT_EVENTS')).state.messages;
          if (published >= total) break;
          await settle(250);
        }
        expect(published).toBe(total);
      } finally {
        await subscriber.close();
      }
    } finally {
      loading = false;
      await load;
      await db.end();
    }
  }, 400_000);
});
