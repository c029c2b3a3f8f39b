import { WEFT_MODES } from '../../all-in-one/test/weft-modes.js';
import { client } from '../../all-in-one/test/weft-harness.js';
import {
  BOOTSTRAP_KEY,
  GatedServer,
  readUntil,
  startTestingStack,
  type InProcessTestingStack,
} from './support/testing-stack.js';

/** A batch cut short by a stop resumes at the next start, and no execution of its plan runs twice. */
describe.each(WEFT_MODES)('batch resumed after a restart (%s)', (mode) => {
  let stack: InProcessTestingStack;
  let gated: GatedServer;
  beforeAll(async () => {
    gated = new GatedServer();
    await gated.start();
    stack = await startTestingStack(mode);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await gated?.stop();
  });

  test('the remaining runs run after the restart, each execution once', async () => {
    const processId = await stack.createProcess(
      'Resumed',
      [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'mid', type: 'integrationNode', config: { label: 'Call', method: 'GET', url: gated.url } },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      [
        { source_node_id: 'in', target_node_id: 'mid' },
        { source_node_id: 'mid', target_node_id: 'out' },
      ],
    );
    const inputNodeId = await stack.nodeId(processId, 'In');
    for (const name of ['r-1', 'r-2', 'r-3']) {
      await stack.as(stack.userKey)('POST', `/api/v1/test-cases/by-process/${processId}`, { name, inputNodeId });
    }
    const started = await stack.as(BOOTSTRAP_KEY)('POST', '/api/v1/test-runs/batch?waitSeconds=0', { processId });
    expect(started.status).toBe(202);
    await readUntil(
      async () => gated.requests,
      (count) => count === 1,
    );
    gated.releaseOne();
    // The second run is in flight (its call held) when the services stop.
    await readUntil(
      async () => gated.requests,
      (count) => count === 2,
    );
    const stopping = stack.under.stopAll();
    gated.release();
    await stopping;

    const restarted = await stack.under.startReplica();
    const batchPath = `/api/v1/test-runs/batches/${started.body.id}`;
    const finished = await readUntil(
      () => client(restarted.url, BOOTSTRAP_KEY)('GET', batchPath),
      (answer) => answer.body.status === 'completed',
    );
    expect(finished.body).toMatchObject({ total: 3, done: 3, stats: { passed: 3 } });
    const executions = new Set(finished.body.runs.map((run: { executionId: string }) => run.executionId));
    expect(executions.size).toBe(3);
    expect(gated.requests).toBe(3);
  });
});
