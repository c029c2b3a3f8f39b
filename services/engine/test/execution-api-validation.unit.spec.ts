import { notFound, ProblemError, type HttpCall, type ProcessRecord } from '@weft/contracts';
import type { MessageContext } from '@weft/bus';
import type { Db, EventStore } from '@weft/event-store';
import { ExecutionApi } from '../src/application/execution-api.js';
import type { Logger } from '@weft/observability';
import type {
  ErrorWebhookQueue,
  ErrorWebhookSender,
  ExecutionLeases,
  ProcessDirectory,
} from '../src/application/engine-ports.js';
import { ExecutionEngine } from '../src/application/execution-engine.js';
import { GraphBuilder } from './fixtures/graph-builder.js';

/**
 * Refusals happen before the engine, the queue or the read models are touched: those are
 * left unusable here (a call to them fails the test); the processes come from a map (the real
 * catalog behind the engine's port is exercised by the integration tests).
 */
const unused = new Proxy(
  {},
  {
    get: () => {
      throw new Error('touched before validation');
    },
  },
);

describe('execution API: a 400 lists every violation', () => {
  const processes = new Map<string, ProcessRecord>();
  const add = (process: ProcessRecord): ProcessRecord => (processes.set(process.id, process), process);
  const catalog: ProcessDirectory = {
    getProcess: async (processId) => processes.get(processId) ?? Promise.reject(notFound(`process ${processId}`)),
    getConnection: () => Promise.reject(new Error('no connection is needed here')),
  };
  // The engine only compiles graphs here (no store, queue or lease is reached).
  const engine = new ExecutionEngine({
    store: unused as EventStore,
    directory: catalog,
    executors: new Map(),
    leases: unused as ExecutionLeases,
    errorWebhookQueue: unused as ErrorWebhookQueue,
    errorWebhookSender: unused as ErrorWebhookSender,
    logger: unused as Logger,
  });
  const api = new ExecutionApi({
    engine,
    db: unused as Db,
    directory: catalog,
    enqueue: () => Promise.reject(new Error('enqueued a refused request')),
  });
  const g = new GraphBuilder()
    .node('A', 'inputNode', { triggerType: 'manual' })
    .node('B', 'inputNode', { triggerType: 'webhook' })
    .node('Out', 'outputNode');
  const process = add(g.process());
  const context: MessageContext = {
    headers: {},
    actor: { organizationId: process.organization_id, userId: crypto.randomUUID(), userName: 'QA', system: false },
  };
  const call = (query: HttpCall['query']): HttpCall => ({
    params: { processId: process.id },
    query,
    body: {},
    headers: {},
  });
  const violations = async (work: Promise<unknown>) => {
    const error = await work.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).status).toBe(400);
    return ((error as ProblemError).problem.errors ?? []).map((violation) => violation.path).sort();
  };

  test('test run: a bad waitSeconds and a bad inputNodeId together', async () => {
    const paths = await violations(api.testProcess(call({ waitSeconds: 'soon', inputNodeId: g.id('Out') }), context));
    expect(paths).toEqual(['/query/inputNodeId', '/query/waitSeconds']);
  });

  test.each(['1', '2026-13-45', 'yesterday', '2026-11-21T25:00Z'])(
    'history: from=%s is not an ISO time',
    async (from) => {
      expect(await violations(api.listExecutions(call({ from }), context))).toEqual(['/query/from']);
    },
  );

  test('test run: a graph that cannot run (a cycle) is refused at once, not left to the queue', async () => {
    const cyclic = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('B', 'outputNode')
      .node('C', 'outputNode')
      .edge('In', 'B')
      .edge('B', 'C')
      .edge('C', 'B');
    const looped = add(cyclic.process({ organization_id: process.organization_id }));
    const paths = await violations(
      api.testProcess(
        { params: { processId: looped.id }, query: { waitSeconds: 'x' }, body: {}, headers: {} },
        context,
      ),
    );
    expect(paths).toEqual(['/edges', '/query/waitSeconds']);
  });

  test('history: bad paging, status, from and to together', async () => {
    const query = { page: 'abc', pageSize: '0', status: 'done', from: 'yesterday', to: 'later' };
    const paths = await violations(api.listExecutions(call(query), context));
    expect(paths).toEqual(['/query/from', '/query/page', '/query/pageSize', '/query/status', '/query/to']);
  });
});
