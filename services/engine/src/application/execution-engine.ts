import { MapLettingGo } from '@weft/collections';
import {
  badRequest,
  notFound,
  ProblemError,
  type ExecutionRequest,
  type FailedNodeInfo,
  type ProcessRecord,
} from '@weft/contracts';
import {
  WrongExpectedVersionError,
  type EventMetadata,
  type EventStore,
  type StreamAtVersion,
} from '@weft/event-store';
import { withSpan, type Logger } from '@weft/observability';
import type { ExecutionCommand } from '../domain/execution/commands.js';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId, type ExecutionEvent } from '../domain/execution/events.js';
import { foldExecution, initialExecutionState, isFinished, type ExecutionState } from '../domain/execution/state.js';
import { compileGraph, GraphError, snapshotOf, type ExecutionGraph } from '../domain/graph/execution-graph.js';
import { chooseTriggerNode } from '../domain/graph/trigger-node.js';
import type { NodeExecutorRegistry } from '../domain/nodes/node-executor.js';
import type {
  ErrorWebhookQueue,
  ErrorWebhookSender,
  ExecutionLeases,
  ExecutionStatusReader,
  ParkedWaits,
  ProcessDirectory,
} from './engine-ports.js';
import { ErrorWebhookDeliveries, type ErrorWebhookPolicy } from './error-webhook-deliveries.js';
import { AppendRefusedError, ExecutionEventWriter, type CommitBatch } from './execution-event-writer.js';
import { commandsAfterRefusedAppend } from './refused-append.js';
import { assertStorableInput } from './storable-input.js';
import { ExecutionRun } from './execution-run.js';
import { ExecutionSlots } from './execution-slots.js';
import {
  DEFAULT_EVENT_SIZE_LIMITS,
  EventTooLargeError,
  resolveStoredValues,
  ValueTooLargeError,
  type EventStorage,
} from './event-values.js';
import { GraphSnapshotRecords } from './graph-snapshot-records.js';
import { executionMetadataOf, startExecutionCommand } from './start-execution.js';
import { runGraph, type CompletedNode, type RunOutcome } from './graph-runner.js';
import { armTimer, sleepUntil } from './long-timer.js';
import { WaitParking } from './wait-parking.js';

/**
 * Runs executions: starts them from requests, drives each through the graph runner, records
 * every step as events (group commit), applies timeouts, cancellation and retries, resumes
 * executions whose engine died (lapsed lease), parks long waits out of memory and wakes them
 * when due, and reports failures to error webhooks (durably, through `ErrorWebhookDeliveries`).
 */
export interface ExecutionEngineDeps {
  store: EventStore;
  /** Event size limits and the blob storage of large values; default limits, values inline. */
  eventStorage?: EventStorage;
  directory: ProcessDirectory;
  executors: NodeExecutorRegistry;
  leases: ExecutionLeases;
  /** Lets a run parked in a wait notice a cancel made through another engine. */
  statusReader?: ExecutionStatusReader;
  errorWebhookQueue: ErrorWebhookQueue;
  errorWebhookSender: ErrorWebhookSender;
  errorWebhookPolicy?: Partial<ErrorWebhookPolicy>;
  /** Where parked waits are found; without it no run is parked. */
  parkedWaits?: ParkedWaits;
  /** Waits at least this long unload their run from memory; default 60 s. */
  parkAfterMs?: number;
  /** Parked waits read per scan; default 500. */
  wakeBatch?: number;
  /** Resumes without progress after which an execution fails instead of resuming again; default 3. */
  maxResumes?: number;
  logger: Logger;
  now?: () => Date;
  /** Delay before retry `attempt` (2, 3 ...); default 1 s doubling, at most 60 s. */
  retryDelayMs?: (attempt: number) => number;
  /** The wait before a scheduled retry; default a timer on `now` (an injected clock alone cannot shorten it). */
  retrySleep?: (at: Date, signal: AbortSignal) => Promise<void>;
  /** Writes a group commit; default the store's appendMany (with the projection registered inline). */
  commit?: CommitBatch;
  /** True when `commit` takes and drops leases with ExecutionStarted and terminal events. */
  leasesFollowEvents?: boolean;
  /** Lease renewal and orphan scan period; default 5 s. */
  maintenanceMs?: number;
  /** Caps the executions running here (started, waiting, resumed); default no cap. */
  slots?: ExecutionSlots;
  /** Largest a node's config may grow when its templates are resolved; default 16 MiB. */
  maxNodeConfigBytes?: number;
  /** How long a node's events may wait for the run's next ones before they are committed; default 10 ms. */
  lazyAppendMs?: number;
  /** How long a node that touches nothing outside may run before its start is recorded on its own (default 1 s). */
  carriedStartMaxMs?: number;
}

/** A run `startNow` started here. */
export interface StartedHere {
  /** Resolves once the execution is on record (at once unless it was held; ends the hold); rejects when it could not be written. */
  recorded(): Promise<void>;
  /** Never resolves; rejects as soon as the held events could not be written (without ending the hold). */
  readonly unrecorded: Promise<never>;
}

const TIMEOUT = Symbol('timeout');
const CANCELLED = Symbol('cancelled');
const SHUTDOWN = Symbol('shutdown');
const CONFLICT = Symbol('conflict');
const LEASE_LOST = Symbol('lease lost');
const PARKED = Symbol('parked');

interface ActiveExecution {
  run: ExecutionRun;
  controller: AbortController;
  done: Promise<void>;
}

const GRAPH_CACHE_SIZE = 500;
const DEFAULT_MAX_RESUMES = 3;
const DEFAULT_PARK_AFTER_MS = 60_000;
const DEFAULT_WAKE_BATCH = 500;
/** Leases claimed per statement; a takeover repeats it while slots are free and orphans remain. */
const ORPHAN_CLAIM_BATCH = 1000;
/** How long a synchronous request waits for the slots an orphan claim holds before it takes the queue. */
const ORPHAN_CLAIM_WAIT_MS = 1000;

export class ExecutionEngine {
  private readonly writer: ExecutionEventWriter;
  /** How runs store their events; its `graphs` remembers the graphs on record, for starts and resumes. */
  private readonly storage: EventStorage & { graphs: GraphSnapshotRecords };
  /** Runs in flight and callers waiting for them: MapLettingGo (a Map would hold finished runs, see its file). */
  private readonly active = new MapLettingGo<string, ActiveExecution>();
  private readonly finishWaiters = new MapLettingGo<string, Set<() => void>>();
  private readonly graphs = new Map<string, ExecutionGraph>();
  /** Timers of parked waits due within the next scans, by execution id. */
  private readonly armed = new Map<string, () => void>();
  private readonly now: () => Date;
  private readonly deliveries: ErrorWebhookDeliveries;
  private maintenance: NodeJS.Timeout | undefined;
  /** Settles when the orphan claim in flight (holding the free slots) has given back those it did not use. */
  private orphanClaim: Promise<void> | undefined;
  private stopping = false;
  /** Every launched run holds one; the request consumer pulls only while one is free. */
  readonly slots: ExecutionSlots;

  constructor(private readonly deps: ExecutionEngineDeps) {
    this.slots = deps.slots ?? new ExecutionSlots();
    this.writer = new ExecutionEventWriter(
      deps.commit ?? (async (batch) => void (await deps.store.appendMany(batch))),
      { lazyMs: deps.lazyAppendMs },
    );
    this.now = deps.now ?? (() => new Date());
    const storage = deps.eventStorage ?? { limits: DEFAULT_EVENT_SIZE_LIMITS };
    this.storage = {
      ...storage,
      graphs: storage.graphs ?? new GraphSnapshotRecords(deps.store, storage.limits.maxEventBytes),
    };
    this.deliveries = new ErrorWebhookDeliveries({
      store: deps.store,
      queue: deps.errorWebhookQueue,
      sender: deps.errorWebhookSender,
      append: (streamId, events, expectedVersion) => this.writer.append(streamId, events, expectedVersion),
      now: this.now,
      logger: deps.logger,
      policy: deps.errorWebhookPolicy,
    });
  }

  private get maintenancePeriod(): number {
    return this.deps.maintenanceMs ?? 5000;
  }

  /** Starts renewing leases and resuming orphaned executions (call once the engine should take work). */
  startMaintenance(): void {
    const period = this.maintenancePeriod;
    const tick = (): void => {
      void this.maintain().catch((error: unknown) =>
        this.deps.logger.warn({ err: error }, 'engine maintenance failed'),
      );
    };
    this.maintenance = setInterval(tick, period);
    this.maintenance.unref();
    tick();
  }

  /**
   * Renews the leases of the runs here (stopping those whose lease was lost), resumes executions
   * whose engine stopped renewing, wakes parked waits that are due and arms timers for those due
   * before the next scan, and starts due error-webhook deliveries in the background.
   */
  async maintain(): Promise<string[]> {
    if (this.stopping) return [];
    await this.renewLeases();
    // A run that writes nothing for a while (a wait) learns of a remote cancel here.
    for (const executionId of (await this.deps.statusReader?.finishedAmong([...this.active.keys()])) ?? []) {
      this.active.get(executionId)?.controller.abort(CONFLICT);
    }
    const resumed = await this.takeOverOrphans();
    resumed.push(...(await this.wakeParked()));
    this.deliveries.poke();
    return resumed;
  }

  /** Attempts the error-webhook deliveries due now; resolves to how many (tests, shutdown). */
  deliverErrorWebhooks(): Promise<number> {
    return this.deliveries.deliverDue();
  }

  /** Renews only what runs here; a run whose lease another engine took stops at once. */
  private async renewLeases(): Promise<void> {
    // A held run (not on record yet) has no lease to renew; its first commit takes one.
    const running = [...this.active].filter(([, active]) => !active.run.notOnRecord).map(([id]) => id);
    const held = new Set(await this.deps.leases.renew(running));
    for (const executionId of running) {
      if (held.has(executionId)) continue;
      const lost = this.active.get(executionId);
      // A run that just ended or parked dropped its lease in that commit: nothing was lost.
      if (!lost || lost.controller.signal.aborted || isFinished(lost.run.state)) continue;
      this.deps.logger.warn({ executionId }, 'execution lease lost, stopping its run here');
      lost.controller.abort(LEASE_LOST);
    }
  }

  /**
   * Claims lapsed leases in bulk, as many as slots are free, again until none is left, and resumes
   * each batch at once: takeover takes one scan after the leases lapse, however many a dead engine held.
   */
  private async takeOverOrphans(): Promise<string[]> {
    const resumed: string[] = [];
    while (!this.stopping) {
      // Slots are taken before the claim, so requests pulled meanwhile cannot push the engine over its limit.
      const slots: (() => void)[] = [];
      for (
        let slot = this.slots.tryTake();
        slot;
        slot = slots.length < ORPHAN_CLAIM_BATCH ? this.slots.tryTake() : undefined
      )
        slots.push(slot);
      if (slots.length === 0) return resumed;
      let claimed: string[] = [];
      let claimSettled!: () => void;
      const claim = new Promise<void>((resolve) => (claimSettled = resolve));
      this.orphanClaim = claim;
      try {
        claimed = await this.deps.leases.claimOrphans(slots.length);
      } finally {
        for (const unused of slots.slice(claimed.length)) unused();
        // A scan that overlapped this one (a slow claim, a direct maintain()) owns the marker now.
        if (this.orphanClaim === claim) this.orphanClaim = undefined;
        claimSettled();
      }
      const outcomes = await Promise.all(
        claimed.map((executionId, index) => this.resumeClaimed(executionId, slots[index]!)),
      );
      resumed.push(...claimed.filter((_, index) => outcomes[index]));
      // A batch that resumed nothing (the database refuses) waits for the next scan rather than spinning.
      if (claimed.length < slots.length || !outcomes.some(Boolean)) return resumed;
    }
    return resumed;
  }

  /** Resumes an execution whose lease was just claimed here (holding `slot` meanwhile); the lease is released again when the resume fails. */
  private async resumeClaimed(executionId: string, slot: () => void): Promise<boolean> {
    try {
      if (this.active.has(executionId)) return false;
      return await this.resume(executionId);
    } catch (error) {
      this.deps.logger.warn({ err: error, executionId }, 'resume failed, lease released');
      await this.deps.leases.release(executionId).catch(() => undefined);
      return false;
    } finally {
      slot();
    }
  }

  /** Claims a lapsed lease and resumes; the lease is released again when the resume fails. */
  private async takeOver(executionId: string, stillDue?: () => Promise<boolean>): Promise<boolean> {
    if (this.stopping || this.active.has(executionId)) return false;
    // A resume needs a free slot like a new start; without one the next scan tries again.
    const slot = this.slots.tryTake();
    if (!slot) return false;
    try {
      if (!(await this.deps.leases.claimLapsed(executionId))) return false;
      try {
        if (stillDue && !(await stillDue())) {
          await this.deps.leases.release(executionId);
          return false;
        }
        return await this.resume(executionId);
      } catch (error) {
        this.deps.logger.warn({ err: error, executionId }, 'resume failed, lease released');
        await this.deps.leases.release(executionId).catch(() => undefined);
        return false;
      }
    } finally {
      slot();
    }
  }

  /** Wakes parked waits that are due; arms timers (in steps, any distance) for those due before the next scan. */
  private async wakeParked(): Promise<string[]> {
    const parked = this.deps.parkedWaits;
    if (!parked) return [];
    const now = this.now();
    const horizon = new Date(now.getTime() + 2 * this.maintenancePeriod);
    const woken: string[] = [];
    for (const { executionId, dueAt } of await parked.dueBefore(horizon, this.deps.wakeBatch ?? DEFAULT_WAKE_BATCH)) {
      if (this.active.has(executionId) || this.armed.has(executionId)) continue;
      if (dueAt <= now) {
        if (await this.wake(executionId)) woken.push(executionId);
        continue;
      }
      const fire = (): void => {
        this.armed.delete(executionId);
        void this.wake(executionId);
      };
      this.armed.set(executionId, armTimer(dueAt, this.now, fire));
    }
    return woken;
  }

  private wake(executionId: string): Promise<boolean> {
    return this.takeOver(executionId, () => this.deps.parkedWaits!.isDue(executionId, this.now()));
  }

  get activeCount(): number {
    return this.active.size;
  }

  isRunningHere(executionId: string): boolean {
    return this.active.has(executionId);
  }

  /**
   * Records that the request was accepted (ExecutionAccepted) before it is queued, so the id handed
   * out reads `running` and `queued` at once and a cancel holds; false when it was accepted (or ran) before.
   */
  async accept(request: ExecutionRequest, triggerNodeId: string): Promise<boolean> {
    const events = decide(this.acceptCommand(request, triggerNodeId), initialExecutionState());
    const metadata = executionMetadataOf(request);
    try {
      await this.writer.append(
        executionStreamId(request.executionId),
        events.map((event) => ({ type: event.type, data: event.data, metadata })),
        'no_stream',
      );
      return true;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) return false;
      throw error;
    }
  }

  /**
   * Starts a request here at once, without the work queue: ExecutionStarted and the lease in one
   * commit, then the run (no ExecutionAccepted: the request never waits in a queue, and its start,
   * committed as early as an acceptance would be, says all an acceptance would). A synchronous caller waits for
   * this engine anyway, so the queue's hop (a commit, a delivery, a read of the stream and a
   * second process load) only added time. Undefined, with nothing written, when this engine has no
   * free slot, takes no work or its commit does not take leases (the caller then queues the request), or when
   * the id was accepted before (the caller then finds that execution).
   *
   * With `holdMs` (only for an id no one else can know yet: a duplicate would surface only after
   * the run), the start is not written first: the run's events wait for up to `holdMs` and a short
   * run is written whole by one commit (`ExecutionRun.hold`). The caller awaits the answer's
   * `recorded()` before it tells anyone of the execution. `requires` (with `holdMs` only): other
   * streams' versions the run's first commit holds only with; when one has moved, nothing of the
   * run is on record and `recorded()` rejects with a WrongExpectedVersionError naming it.
   */
  async startNow(
    request: ExecutionRequest,
    process: ProcessRecord,
    triggerNodeId: string,
    options: { holdMs?: number; requires?: readonly StreamAtVersion[] } = {},
  ): Promise<StartedHere | undefined> {
    // Unheld, the start's own commit would fail and read as a duplicate id.
    if (options.requires && !((options.holdMs ?? 0) > 0)) throw new Error('startNow: requires needs holdMs');
    // Only an engine that takes work (startMaintenance) runs requests; a read-only replica queues them.
    if (!this.maintenance || this.stopping || !this.deps.leasesFollowEvents || this.active.has(request.executionId))
      return undefined;
    let slot = this.slots.tryTake();
    // The orphan scan holds every free slot while its claim is in flight (a round trip, each
    // maintenance tick); a request that came then waits for the claim, not for the queue. A claim
    // blocked on a locked lease row could take up to the lock timeout: past ORPHAN_CLAIM_WAIT_MS
    // the request takes the queue as it would have.
    if (!slot && this.orphanClaim) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.orphanClaim,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, ORPHAN_CLAIM_WAIT_MS))),
      ]);
      clearTimeout(timer);
      if (this.stopping || this.active.has(request.executionId)) return undefined;
      slot = this.slots.tryTake();
    }
    if (!slot) return undefined;
    try {
      const graph = this.graphOf(process);
      const run = this.newRun(request.executionId, initialExecutionState(), 0, executionMetadataOf(request));
      const holdMs = options.holdMs ?? 0;
      // Held either way until the start is decided: one refused here (too large) leaves nothing behind.
      run.hold(Math.max(holdMs, 0), options.requires);
      try {
        run.execute(startExecutionCommand(request, process, triggerNodeId, this.now()));
      } catch (error) {
        run.discard();
        throw error;
      }
      if (holdMs <= 0) {
        try {
          await run.flushed();
        } catch (error) {
          if (error instanceof WrongExpectedVersionError) return undefined;
          throw error;
        }
      }
      this.launch(run, graph);
      const unrecorded = run.whenRecorded.then(() => new Promise<never>(() => undefined));
      unrecorded.catch(() => undefined);
      return { recorded: () => run.recorded(), unrecorded };
    } finally {
      slot();
    }
  }

  private acceptCommand(
    request: ExecutionRequest,
    triggerNodeId: string,
  ): Extract<ExecutionCommand, { type: 'AcceptExecution' }> {
    return {
      type: 'AcceptExecution',
      data: {
        executionId: request.executionId,
        processId: request.processId,
        organizationId: request.organizationId,
        triggerNodeId,
        triggeredByUserId: request.triggeredByUserId ?? null,
        source: request.source,
      },
      metadata: { now: this.now() },
    };
  }

  /** Records an accepted execution that could not be queued as failed (it would read `queued` for ever). */
  async failQueued(executionId: string, errorMessage: string): Promise<void> {
    const stored = await this.deps.store.readStream(executionStreamId(executionId));
    const state = foldExecution(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
    if (state.started || isFinished(state)) return;
    const events = decide(
      { type: 'FailExecution', data: { errorMessage, failedNode: null }, metadata: { now: this.now() } },
      state,
    );
    await this.writer.append(
      executionStreamId(executionId),
      events.map((event) => ({ type: event.type, data: event.data, metadata: stored[0]?.metadata ?? {} })),
      stored.length,
    );
  }

  /**
   * Stores ExecutionStarted (the point where a queued request may be acked) and runs the
   * execution in the background. A request whose execution already started, or was cancelled
   * while queued, is a no-op: no node runs.
   */
  async start(request: ExecutionRequest): Promise<'started' | 'duplicate'> {
    const process = await this.deps.directory.getProcess(request.processId, request.organizationId);
    if (process.organization_id !== request.organizationId) throw notFound(`process ${request.processId} not found`);
    const triggerNodeId = chooseTriggerNode(process, request.inputNodeId);
    const graph = this.graphOf(process);
    assertStorableInput(request.inputData);
    // An acceptance (or a cancel while queued) may be stored, or land while this start is written: read, then retry once.
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.startOnce(request, process, triggerNodeId, graph);
      if (outcome !== 'moved' || attempt >= 2) return outcome === 'moved' ? 'duplicate' : outcome;
    }
  }

  private async startOnce(
    request: ExecutionRequest,
    process: ProcessRecord,
    triggerNodeId: string,
    graph: ExecutionGraph,
  ): Promise<'started' | 'duplicate' | 'moved'> {
    const stored = await this.deps.store.readStream(executionStreamId(request.executionId));
    const state = foldExecution(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
    if (state.status !== 'not_started') return 'duplicate';
    if (!this.deps.leasesFollowEvents && !(await this.deps.leases.claimNew(request.executionId))) return 'duplicate';
    const metadata = stored[0]?.metadata ?? executionMetadataOf(request);
    const run = this.newRun(request.executionId, state, stored.length, metadata);
    run.execute(startExecutionCommand(request, process, triggerNodeId, this.now()));
    try {
      await run.flushed();
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        if (!this.deps.leasesFollowEvents) await this.deps.leases.release(request.executionId).catch(() => undefined);
        return 'moved';
      }
      await this.deps.leases.release(request.executionId).catch(() => undefined);
      throw error;
    }
    this.launch(run, graph);
    return 'started';
  }

  /**
   * Picks an execution up from its events (the lease is held); false when it already finished,
   * or when it was resumed `maxResumes` times without progress: then it fails, since its engine
   * keeps dying on the same node. Each resume is recorded before anything runs again.
   */
  async resume(executionId: string): Promise<boolean> {
    const stored = await this.deps.store.readStream(executionStreamId(executionId));
    // Values that went to blob storage are read back: completed nodes seed the resumed run.
    const events = await Promise.all(
      stored.map((event) =>
        resolveStoredValues({ type: event.type, data: event.data } as ExecutionEvent, this.storage.values),
      ),
    );
    const state = foldExecution(events);
    if (!state.started || isFinished(state)) {
      await this.deps.leases.release(executionId);
      return false;
    }
    const metadata: EventMetadata = stored[0]?.metadata ?? {};
    const run = this.newRun(executionId, state, stored.length, metadata);
    const { started } = state;
    // A start stored before schema version 3 carries its graph; a later one names it.
    const graph = compileGraph(
      started.graphSnapshot ?? (await this.storage.graphs.load(started.processId, started.graphSnapshotId)),
    );
    if (state.resumesWithoutProgress >= (this.deps.maxResumes ?? DEFAULT_MAX_RESUMES)) {
      await this.failStuck(run, graph);
      return false;
    }
    run.execute({ type: 'ResumeExecution', data: {}, metadata: { now: this.now() } });
    await run.flushed();
    this.deps.logger.info(
      { executionId, completedNodes: [...state.nodeRuns.values()].filter((r) => r.status === 'completed').length },
      'resuming execution',
    );
    this.launch(run, graph);
    return true;
  }

  /** Fails an execution whose engine stopped again and again while running the same node. */
  private async failStuck(run: ExecutionRun, graph: ExecutionGraph): Promise<void> {
    const node = graph.nodes.get(stuckNodeId(run.state));
    const label = node?.label ?? 'unknown';
    const error = `engine stopped repeatedly while running node ${label}`;
    const failedNode = node ? { id: node.id, name: node.label, type: node.type, error } : null;
    run.execute({ type: 'FailExecution', data: { errorMessage: error, failedNode }, metadata: { now: this.now() } });
    await run.flushed();
    if (!this.deps.leasesFollowEvents) await this.deps.leases.release(run.executionId);
    this.deps.logger.warn({ executionId: run.executionId, node: label }, error);
    this.notifyFailure(run);
  }

  /** Fails an execution whose events the database refused (from its stored events: the refused ones are lost). */
  private async failRefused(executionId: string, graph: ExecutionGraph, refused: AppendRefusedError): Promise<boolean> {
    const stored = await this.deps.store.readStream(executionStreamId(executionId));
    const state = foldExecution(stored.map((event) => ({ type: event.type, data: event.data }) as ExecutionEvent));
    if (!state.started || isFinished(state)) return false;
    const run = this.newRun(executionId, state, stored.length, stored[0]?.metadata ?? {});
    for (const command of commandsAfterRefusedAppend(refused, graph, state, this.now())) run.execute(command);
    await run.flushed();
    this.deps.logger.warn(
      { executionId, sqlState: refused.sqlState },
      'execution failed: the database refused its events',
    );
    this.notifyFailure(run);
    return true;
  }

  /** Cancels a running execution, here or on another engine (whose next write then conflicts). */
  async cancel(executionId: string, cancelledByUserId: string | null): Promise<void> {
    const local = this.active.get(executionId);
    if (local && local.run.failedWrite === null) {
      try {
        local.run.execute({ type: 'CancelExecution', data: { cancelledByUserId }, metadata: { now: this.now() } });
        local.controller.abort(CANCELLED);
        await local.run.flushed();
        return;
      } catch (error) {
        // The stream moved on elsewhere (a cancel through another engine, say) before this run
        // learned of it: decide again on what is stored (409 when it is already finished).
        if (!(error instanceof WrongExpectedVersionError)) throw error;
      }
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
  waitForFinish(
    executionId: string,
    timeoutMs: number,
    isFinishedElsewhere: () => Promise<boolean>,
    signal?: AbortSignal,
  ): Promise<boolean> {
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
      signal?.addEventListener('abort', () => done(false), { once: true });
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
    for (const cancel of this.armed.values()) cancel();
    this.armed.clear();
    const running = [...this.active.values()];
    for (const execution of running) execution.controller.abort(SHUTDOWN);
    await Promise.all(running.map((execution) => execution.done));
    await this.deliveries.idle();
    await this.writer.idle();
  }

  private newRun(executionId: string, state: ExecutionState, version: number, metadata: EventMetadata): ExecutionRun {
    const run: ExecutionRun = new ExecutionRun(
      executionId,
      state,
      version,
      metadata,
      this.writer,
      this.now,
      (error) => {
        if (!(error instanceof WrongExpectedVersionError))
          this.deps.logger.error({ err: error, executionId }, 'execution write failed');
        // Only this run stops: a start that lost the race for its id must not stop the run that won it.
        const active = this.active.get(executionId);
        if (active?.run === run) active.controller.abort(CONFLICT);
      },
      this.storage,
      this.deps.carriedStartMaxMs,
    );
    return run;
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
    const releaseSlot = this.slots.take();
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
        releaseSlot();
        // A run parked or handed over is not finished: waiters poll the read model for it instead.
        if (isFinished(run.state)) for (const waiter of [...(this.finishWaiters.get(run.executionId) ?? [])]) waiter();
      });
  }

  private async drive(run: ExecutionRun, graph: ExecutionGraph, controller: AbortController): Promise<void> {
    const started = run.state.started!;
    const deadline = new Date(Date.parse(started.startedAt) + started.timeoutSeconds * 1000);
    const cancelTimeout = armTimer(deadline, this.now, () => controller.abort(TIMEOUT));
    const parking = this.parkingFor(run, graph, controller, deadline);
    let reason: unknown = null;
    let ended = false;
    try {
      for (;;) {
        // A scheduled retry starts at its time, also when another engine resumed it.
        if (run.state.retryAt !== null) {
          try {
            const retryAt = new Date(run.state.retryAt);
            if (this.deps.retrySleep) await this.deps.retrySleep(retryAt, controller.signal);
            else await sleepUntil(retryAt, this.now, controller.signal);
          } catch {
            reason = controller.signal.reason;
            break;
          }
        }
        const outcome = await this.runOnce(run, graph, controller.signal, parking);
        if (outcome.status === 'completed') {
          try {
            run.execute({
              type: 'CompleteExecution',
              data: { outputData: outputsOf(graph, outcome) },
              metadata: { now: this.now() },
            });
          } catch (error) {
            // Each output fit, their sum does not: the run fails saying so (a resume would only
            // meet the same wall, until the engine gave up on it as stopping repeatedly).
            if (!(error instanceof EventTooLargeError || error instanceof ValueTooLargeError)) throw error;
            run.execute({
              type: 'FailExecution',
              data: { errorMessage: `the outputs could not be recorded: ${error.message}`, failedNode: null },
              metadata: { now: this.now() },
            });
            await run.flushed();
            ended = true;
            this.notifyFailure(run);
            return;
          }
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
          continue;
        }
        run.execute({
          type: 'FailExecution',
          data: { errorMessage: `${failedNode.name}: ${failedNode.error}`, failedNode },
          metadata: { now: this.now() },
        });
        await run.flushed();
        ended = true;
        this.notifyFailure(run);
        return;
      }
      if (reason === TIMEOUT && !isFinished(run.state)) {
        run.execute({ type: 'TimeOutExecution', data: {}, metadata: { now: this.now() } });
        await run.flushed();
        ended = true;
        this.notifyFailure(run);
        return;
      }
      // A graceful stop hands the run over as due at once: not a crash, so not a resume without progress.
      if (reason === SHUTDOWN && this.deps.parkedWaits && this.deps.leasesFollowEvents && !isFinished(run.state))
        run.execute({ type: 'ParkExecution', data: { dueAt: this.now() }, metadata: { now: this.now() } });
      await run.flushed();
      ended = isFinished(run.state);
      if (reason === PARKED) this.deps.logger.info({ executionId: run.executionId }, 'execution parked');
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
      cancelTimeout();
      // The terminal (or parking) event's commit dropped the lease; otherwise (shutdown, hand-over)
      // it is released here, since the events are flushed and another engine may resume at once.
      if (!ended || !this.deps.leasesFollowEvents)
        await this.deps.leases.release(run.executionId).catch(() => undefined);
    }
  }

  /** Parks the run (unloads it, a due row wakes it) when all it does is a long wait; none without a parked-waits store. */
  private parkingFor(
    run: ExecutionRun,
    graph: ExecutionGraph,
    controller: AbortController,
    deadline: Date,
  ): WaitParking | undefined {
    if (!this.deps.parkedWaits || !this.deps.leasesFollowEvents) return undefined;
    return new WaitParking({
      parkAfterMs: this.deps.parkAfterMs ?? DEFAULT_PARK_AFTER_MS,
      now: this.now,
      deadline,
      runningNodes: () => {
        let running = 0;
        for (const nodeRun of run.state.nodeRuns.values())
          if (nodeRun.status === 'running' && graph.nodes.get(nodeRun.nodeId)?.type !== 'loopNode') running++;
        return running + run.unrecordedStartCount;
      },
      park: (dueAt) => {
        if (controller.signal.aborted) return;
        run.execute({ type: 'ParkExecution', data: { dueAt }, metadata: { now: this.now() } });
        controller.abort(PARKED);
      },
    });
  }

  private runOnce(
    run: ExecutionRun,
    graph: ExecutionGraph,
    signal: AbortSignal,
    parking: WaitParking | undefined,
  ): Promise<RunOutcome> {
    const started = run.state.started!;
    // Their inputs are rebuilt by the runner from their parents, as recorded (NodeStarted references).
    const completed = new Map<string, Omit<CompletedNode, 'input'>>();
    const firstStarts = new Map<string, Date>();
    for (const [key, nodeRun] of run.state.nodeRuns) {
      if (nodeRun.status === 'completed') {
        completed.set(key, { output: nodeRun.outputData, handles: nodeRun.handles });
      }
      if (nodeRun.firstStartedAt) firstStarts.set(key, new Date(nodeRun.firstStartedAt));
    }
    const listener = run.listener();
    const outcome = runGraph({
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
      listener: parking
        ? {
            ...listener,
            nodeCompleted: (...args) => {
              listener.nodeCompleted(...args);
              parking.nodeFinished();
            },
            nodeFailed: (...args) => {
              listener.nodeFailed(...args);
              parking.nodeFinished();
            },
          }
        : listener,
      now: this.now,
      sleepUntil: parking
        ? (at, waitSignal) => parking.sleep(at, waitSignal)
        : (at, waitSignal) => sleepUntil(at, this.now, waitSignal),
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
    // Nodes still running now (a sibling failed, the run was aborted) report nothing more.
    return outcome.finally(() => run.forgetUnrecordedStarts());
  }

  /** The failure was recorded with its delivery scheduled (same commit): deliver now rather than at the next scan. */
  private notifyFailure(run: ExecutionRun): void {
    if (run.state.started?.errorWebhookUrl) this.deliveries.poke();
  }
}

/** Delay before retry `attempt` (2, 3 ...) when none is configured: 1 s, doubled each time, at most 60 s. */
export const defaultRetryDelay = (attempt: number): number => Math.min(60_000, 1000 * 2 ** (attempt - 2));

/** The node an engine was running when it stopped: a running node (loops last), else the last one started. */
function stuckNodeId(state: ExecutionState): string {
  const runs = [...state.nodeRuns.values()];
  const running = runs.filter((nodeRun) => nodeRun.status === 'running');
  const candidates = running.length > 0 ? running : runs;
  return (candidates.at(-1)?.nodeId ?? state.started?.triggerNodeId) as string;
}

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
