import {
  badRequest,
  notFound,
  ProblemError,
  type ExecutionRequest,
  type FailedNodeInfo,
  type ProcessRecord,
} from '@weft/contracts';
import { WrongExpectedVersionError, type EventMetadata, type EventStore } from '@weft/event-store';
import { withSpan, type Logger } from '@weft/observability';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId, type ExecutionEvent } from '../domain/execution/events.js';
import { foldExecution, initialExecutionState, isFinished, type ExecutionState } from '../domain/execution/state.js';
import { compileGraph, GraphError, snapshotOf, type ExecutionGraph } from '../domain/graph/execution-graph.js';
import { chooseTriggerNode } from '../domain/graph/trigger-node.js';
import type { NodeExecutorRegistry } from '../domain/nodes/node-executor.js';
import type { ErrorNotifier, ExecutionLeases, ExecutionStatusReader, ProcessDirectory } from './engine-ports.js';
import { AppendRefusedError, ExecutionEventWriter, type CommitBatch } from './execution-event-writer.js';
import { commandsAfterRefusedAppend } from './refused-append.js';
import { assertStorableInput } from './storable-input.js';
import { ExecutionRun } from './execution-run.js';
import { runGraph, type CompletedNode, type RunOutcome } from './graph-runner.js';

/**
 * Runs executions: starts them from requests, drives each through the graph runner, records
 * every step as events (group commit), applies timeouts, cancellation and retries, resumes
 * executions whose engine died (lapsed lease), and reports failures to error webhooks.
 */
export interface ExecutionEngineDeps {
  store: EventStore;
  directory: ProcessDirectory;
  executors: NodeExecutorRegistry;
  leases: ExecutionLeases;
  /** Lets a run parked in a wait notice a cancel made through another engine. */
  statusReader?: ExecutionStatusReader;
  errorNotifier: ErrorNotifier;
  logger: Logger;
  now?: () => Date;
  /** Delay before retry `attempt` (2, 3 ...); default 1 s doubling, at most 60 s. */
  retryDelayMs?: (attempt: number) => number;
  /** Writes a group commit; default the store's appendMany (with the projection registered inline). */
  commit?: CommitBatch;
  /** True when `commit` takes and drops leases with ExecutionStarted and terminal events. */
  leasesFollowEvents?: boolean;
  /** Lease renewal and orphan scan period; default 5 s. */
  maintenanceMs?: number;
  /** Largest a node's config may grow when its templates are resolved; default 16 MiB. */
  maxNodeConfigBytes?: number;
}

const TIMEOUT = Symbol('timeout');
const CANCELLED = Symbol('cancelled');
const SHUTDOWN = Symbol('shutdown');
const CONFLICT = Symbol('conflict');

interface ActiveExecution {
  run: ExecutionRun;
  controller: AbortController;
  done: Promise<void>;
}

const DEFAULT_TIMEOUT_SECONDS = 300;
const GRAPH_CACHE_SIZE = 500;

export class ExecutionEngine {
  private readonly writer: ExecutionEventWriter;
  private readonly active = new Map<string, ActiveExecution>();
  private readonly finishWaiters = new Map<string, Set<() => void>>();
  private readonly graphs = new Map<string, ExecutionGraph>();
  private readonly now: () => Date;
  private maintenance: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(private readonly deps: ExecutionEngineDeps) {
    this.writer = new ExecutionEventWriter(deps.commit ?? (async (batch) => void (await deps.store.appendMany(batch))));
    this.now = deps.now ?? (() => new Date());
  }

  /** Starts renewing leases and resuming orphaned executions (call once the engine should take work). */
  startMaintenance(): void {
    const period = this.deps.maintenanceMs ?? 5000;
    const tick = (): void => {
      void this.maintain().catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, 'engine maintenance failed'),
      );
    };
    this.maintenance = setInterval(tick, period);
    this.maintenance.unref();
    tick();
  }

  /** Renews this engine's leases and resumes executions whose engine stopped renewing. */
  async maintain(): Promise<string[]> {
    if (this.stopping) return [];
    await this.deps.leases.renewAll();
    // A run that writes nothing for a while (a wait) learns of a remote cancel here.
    for (const executionId of (await this.deps.statusReader?.finishedAmong([...this.active.keys()])) ?? []) {
      this.active.get(executionId)?.controller.abort(CONFLICT);
    }
    const resumed: string[] = [];
    for (const executionId of await this.deps.leases.orphans(100)) {
      if (this.active.has(executionId) || !(await this.deps.leases.claimLapsed(executionId))) continue;
      if (await this.resume(executionId)) resumed.push(executionId);
    }
    return resumed;
  }

  get activeCount(): number {
    return this.active.size;
  }

  isRunningHere(executionId: string): boolean {
    return this.active.has(executionId);
  }

  /**
   * Stores ExecutionStarted (the point where a queued request may be acked) and runs the
   * execution in the background. A request whose execution already exists is a no-op.
   */
  async start(request: ExecutionRequest): Promise<'started' | 'duplicate'> {
    const process = await this.deps.directory.getProcess(request.processId, request.organizationId);
    if (process.organization_id !== request.organizationId) throw notFound(`process ${request.processId} not found`);
    const triggerNodeId = chooseTriggerNode(process, request.inputNodeId);
    const graph = this.graphOf(process);
    assertStorableInput(request.inputData);
    if (!this.deps.leasesFollowEvents && !(await this.deps.leases.claimNew(request.executionId))) return 'duplicate';
    const metadata: EventMetadata = {
      actorId: request.triggeredByUserId ?? undefined,
      actorName: request.triggeredByUserName,
      organizationId: request.organizationId,
      processId: request.processId,
      correlationId: request.correlationId ?? request.executionId,
      traceId: request.traceId,
    };
    const run = this.newRun(request.executionId, initialExecutionState(), 0, metadata);
    run.execute({
      type: 'StartExecution',
      data: {
        executionId: request.executionId,
        processId: process.id,
        organizationId: process.organization_id,
        processRevision: process.revision,
        triggerNodeId,
        inputData: request.inputData ?? null,
        graphSnapshot: snapshotOf(process),
        triggeredByUserId: request.triggeredByUserId ?? null,
        source: request.source,
        timeoutSeconds: process.timeout_seconds > 0 ? process.timeout_seconds : DEFAULT_TIMEOUT_SECONDS,
        maxRetries: Math.max(0, process.max_retries ?? 0),
        errorWebhookUrl: process.error_webhook_url ?? null,
      },
      metadata: { now: this.now() },
    });
    try {
      await run.flushed();
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) return 'duplicate';
      await this.deps.leases.release(request.executionId).catch(() => undefined);
      throw error;
    }
    this.launch(run, graph);
    return 'started';
  }

  /** Picks an execution up from its events; false when it already finished. */
  async resume(executionId: string): Promise<boolean> {
    const stored = await this.deps.store.readStream(executionStreamId(executionId));
    const events = stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent);
    const state = foldExecution(events);
    if (!state.started || isFinished(state)) {
      await this.deps.leases.release(executionId);
      return false;
    }
    const metadata: EventMetadata = stored[0]?.metadata ?? {};
    const run = this.newRun(executionId, state, stored.length, metadata);
    this.deps.logger.info(
      { executionId, completedNodes: [...state.nodeRuns.values()].filter((r) => r.status === 'completed').length },
      'resuming execution',
    );
    this.launch(run, compileGraph(state.started.graphSnapshot));
    return true;
  }

  /** Fails an execution whose events the database refused (from its stored events: the refused ones are lost). */
  private async failRefused(executionId: string, graph: ExecutionGraph, refused: AppendRefusedError): Promise<boolean> {
    const stored = await this.deps.store.readStream(executionStreamId(executionId));
    const state = foldExecution(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
    if (!state.started || isFinished(state)) return false;
    const run = this.newRun(executionId, state, stored.length, stored[0]?.metadata ?? {});
    const commands = commandsAfterRefusedAppend(refused, graph, state, this.now());
    for (const command of commands) run.execute(command);
    await run.flushed();
    this.deps.logger.warn(
      { executionId, sqlState: refused.sqlState },
      'execution failed: the database refused its events',
    );
    const failed = commands.at(-1)?.data as { errorMessage: string; failedNode: FailedNodeInfo | null };
    this.notifyFailure(run, 'failed', failed.errorMessage, failed.failedNode);
    return true;
  }

  /** Cancels a running execution, here or on another engine (whose next write then conflicts). */
  async cancel(executionId: string, cancelledByUserId: string | null): Promise<void> {
    const local = this.active.get(executionId);
    if (local) {
      local.run.execute({ type: 'CancelExecution', data: { cancelledByUserId }, metadata: { now: this.now() } });
      local.controller.abort(CANCELLED);
      await local.run.flushed();
      return;
    }
    for (let attempt = 0; ; attempt++) {
      const stored = await this.deps.store.readStream(executionStreamId(executionId));
      const state = foldExecution(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
      const events = decide(
        { type: 'CancelExecution', data: { cancelledByUserId }, metadata: { now: this.now() } },
        state,
      );
      try {
        await this.writer.append(
          executionStreamId(executionId),
          events.map((event) => ({ type: event.type, data: event.data, metadata: stored[0]?.metadata ?? {} })),
          stored.length,
        );
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || attempt >= 5) throw error;
      }
    }
  }

  /** Resolves true when the execution finished here, or `isFinished()` says so, within `timeoutMs`. */
  waitForFinish(executionId: string, timeoutMs: number, isFinishedElsewhere: () => Promise<boolean>): Promise<boolean> {
    return new Promise((resolve) => {
      let settled = false;
      const waiters = this.finishWaiters.get(executionId) ?? new Set<() => void>();
      this.finishWaiters.set(executionId, waiters);
      const done = (finished: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearInterval(poll);
        waiters.delete(onFinish);
        if (waiters.size === 0) this.finishWaiters.delete(executionId);
        resolve(finished);
      };
      const onFinish = (): void => done(true);
      waiters.add(onFinish);
      const timer = setTimeout(() => done(false), timeoutMs);
      // Another replica may run it: poll the read model, slowly (the local path answers at once).
      const poll = setInterval(() => {
        if (this.active.has(executionId)) return;
        void isFinishedElsewhere().then(
          (finished) => finished && done(true),
          () => undefined,
        );
      }, 250);
    });
  }

  /** Stops taking work; running executions stop where they are and are resumed by another engine. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.maintenance);
    const running = [...this.active.values()];
    for (const execution of running) execution.controller.abort(SHUTDOWN);
    await Promise.all(running.map((execution) => execution.done));
    await this.writer.idle();
    await this.deps.errorNotifier.idle();
  }

  private newRun(executionId: string, state: ExecutionState, version: number, metadata: EventMetadata): ExecutionRun {
    return new ExecutionRun(executionId, state, version, metadata, this.writer, this.now, (error) => {
      if (!(error instanceof WrongExpectedVersionError))
        this.deps.logger.error({ err: error, executionId }, 'execution write failed');
      this.active.get(executionId)?.controller.abort(CONFLICT);
    });
  }

  /** Compiled once per process revision and shared by its executions; 400 when the graph cannot run. */
  graphOf(process: ProcessRecord): ExecutionGraph {
    const key = `${process.id}:${process.revision}:${process.updated_at}`;
    let graph = this.graphs.get(key);
    if (!graph) {
      try {
        graph = compileGraph(snapshotOf(process));
      } catch (error) {
        if (error instanceof GraphError) {
          throw badRequest(`process ${process.id} cannot run: ${error.message}`, [
            { path: '/edges', message: error.message },
          ]);
        }
        throw error;
      }
      if (this.graphs.size >= GRAPH_CACHE_SIZE) this.graphs.delete(this.graphs.keys().next().value as string);
      this.graphs.set(key, graph);
    }
    return graph;
  }

  private launch(run: ExecutionRun, graph: ExecutionGraph): void {
    const controller = new AbortController();
    const active: ActiveExecution = { run, controller, done: Promise.resolve() };
    this.active.set(run.executionId, active);
    const started = run.state.started!;
    active.done = withSpan(
      `execution ${started.processId}`,
      {
        'weft.execution.id': run.executionId,
        'weft.process.id': started.processId,
        'weft.organization.id': started.organizationId,
      },
      () => this.drive(run, graph, controller),
    )
      .catch((error: unknown) =>
        this.deps.logger.error({ err: error, executionId: run.executionId }, 'execution stopped'),
      )
      .finally(() => {
        this.active.delete(run.executionId);
        for (const waiter of [...(this.finishWaiters.get(run.executionId) ?? [])]) waiter();
      });
  }

  private async drive(run: ExecutionRun, graph: ExecutionGraph, controller: AbortController): Promise<void> {
    const started = run.state.started!;
    const deadline = Date.parse(started.startedAt) + started.timeoutSeconds * 1000;
    const timer = setTimeout(() => controller.abort(TIMEOUT), Math.max(0, deadline - this.now().getTime()));
    let reason: unknown = null;
    let ended = false;
    try {
      for (;;) {
        const outcome = await this.runOnce(run, graph, controller.signal);
        if (outcome.status === 'completed') {
          run.execute({
            type: 'CompleteExecution',
            data: { outputData: outputsOf(graph, outcome) },
            metadata: { now: this.now() },
          });
          break;
        }
        if (outcome.status === 'aborted') {
          reason = outcome.reason;
          break;
        }
        const failedNode: FailedNodeInfo = {
          id: outcome.node.id,
          name: outcome.node.label,
          type: outcome.node.type,
          error: outcome.error,
        };
        if (run.state.attempt <= started.maxRetries) {
          const delay = (this.deps.retryDelayMs ?? defaultRetryDelay)(run.state.attempt + 1);
          run.execute({
            type: 'ScheduleRetry',
            data: { retryAt: new Date(this.now().getTime() + delay) },
            metadata: { now: this.now() },
          });
          try {
            await sleep(delay, controller.signal);
          } catch {
            reason = controller.signal.reason;
            break;
          }
          continue;
        }
        run.execute({
          type: 'FailExecution',
          data: { errorMessage: `${failedNode.name}: ${failedNode.error}`, failedNode },
          metadata: { now: this.now() },
        });
        await run.flushed();
        ended = true;
        this.notifyFailure(run, 'failed', `${failedNode.name}: ${failedNode.error}`, failedNode);
        return;
      }
      if (reason === TIMEOUT && !isFinished(run.state)) {
        run.execute({ type: 'TimeOutExecution', data: {}, metadata: { now: this.now() } });
        await run.flushed();
        ended = true;
        this.notifyFailure(run, 'timeout', `execution exceeded its timeout of ${started.timeoutSeconds} s`, null);
        return;
      }
      await run.flushed();
      ended = isFinished(run.state);
    } catch (error) {
      if (error instanceof AppendRefusedError) {
        ended = await this.failRefused(run.executionId, graph, error);
        return;
      }
      if (error instanceof WrongExpectedVersionError || error instanceof ProblemError) {
        // The stream moved elsewhere (a cancel, or another engine took over): nothing left to do here.
        this.deps.logger.info({ executionId: run.executionId, reason: error.message }, 'execution handed over');
        return;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      // The terminal event's commit dropped the lease; otherwise (shutdown, hand-over) it is released
      // here, since the events are flushed and another engine may resume at once.
      if (!ended || !this.deps.leasesFollowEvents)
        await this.deps.leases.release(run.executionId).catch(() => undefined);
    }
  }

  private runOnce(run: ExecutionRun, graph: ExecutionGraph, signal: AbortSignal): Promise<RunOutcome> {
    const started = run.state.started!;
    const completed = new Map<string, CompletedNode>();
    const firstStarts = new Map<string, Date>();
    for (const [key, nodeRun] of run.state.nodeRuns) {
      if (nodeRun.status === 'completed') {
        completed.set(key, { input: nodeRun.inputData, output: nodeRun.outputData, handles: nodeRun.handles });
      }
      if (nodeRun.firstStartedAt) firstStarts.set(key, new Date(nodeRun.firstStartedAt));
    }
    return runGraph({
      graph,
      executors: this.deps.executors,
      executionId: run.executionId,
      processId: started.processId,
      organizationId: started.organizationId,
      triggerNodeId: started.triggerNodeId,
      triggerData: started.inputData,
      completed,
      firstStarts,
      signal,
      listener: run.listener(),
      now: this.now,
      connection: (connectionId) => this.deps.directory.getConnection(connectionId, started.organizationId),
      maxConfigBytes: this.deps.maxNodeConfigBytes,
      // One span per node run, so a trace follows a request from the webhook through every node.
      around: (node, iteration, work) =>
        withSpan(
          `node ${node.type} ${node.label}`,
          {
            'weft.execution.id': run.executionId,
            'weft.process.id': started.processId,
            'weft.node.id': node.id,
            'weft.node.type': node.type,
            ...(iteration.length > 0 ? { 'weft.loop.index': iteration.map((i) => i.index).join('/') } : {}),
          },
          work,
        ),
    });
  }

  private notifyFailure(
    run: ExecutionRun,
    status: 'failed' | 'timeout',
    error: string,
    failedNode: FailedNodeInfo | null,
  ): void {
    const started = run.state.started!;
    if (!started.errorWebhookUrl) return;
    this.deps.errorNotifier.notify(started.errorWebhookUrl, {
      processId: started.processId,
      executionId: run.executionId,
      status,
      error,
      failedNode,
      attempt: run.state.attempt,
      traceId: run.traceId,
    });
  }
}

const defaultRetryDelay = (attempt: number): number => Math.min(60_000, 1000 * 2 ** (attempt - 2));

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** output_data: every completed output node of the main graph, keyed by label. */
function outputsOf(
  graph: ExecutionGraph,
  outcome: Extract<RunOutcome, { status: 'completed' }>,
): Record<string, unknown> {
  const outputs: Record<string, unknown> = {};
  for (const [nodeId, result] of outcome.results) {
    const node = graph.nodes.get(nodeId);
    if (node?.type === 'outputNode' && result.status === 'completed') outputs[node.label] = result.output;
  }
  return outputs;
}
