import {
  badRequest,
  EXECUTION_STATUSES,
  forbidden,
  notFound,
  parsePaging,
  ProblemError,
  type ExecutionRecord,
  type ExecutionRequest,
  type ExecutionStatus,
  type HttpCall,
  type HttpReply,
  type ProblemViolation,
  type ProcessRecord,
} from '@weft/contracts';
import type { Actor, MessageContext } from '@weft/bus';
import { timeOrderedUuid, WrongExpectedVersionError, type Db, type StreamAtVersion } from '@weft/event-store';
import { processStreamId } from '../domain/graph/process-stream.js';
import { chooseTriggerNode } from '../domain/graph/trigger-node.js';
import {
  executionStats,
  executionStatsAtRevision,
  findExecution,
  findExecutions,
  listExecutions,
  recordOfFinishedRows,
} from '../projections/execution-queries.js';
import type { RecentlyFinishedRows } from '../projections/recently-finished-rows.js';
import type { ValueReader } from '../projections/resolve-row-values.js';
import type { ProcessDirectory } from './engine-ports.js';
import type { ExecutionEngine } from './execution-engine.js';
import { ReadBatcher } from './read-batcher.js';
import { assertStorableInput } from './storable-input.js';

/**
 * The engine's request handlers, transport-free: the NestJS controllers hand them the HttpCall
 * and MessageContext. Every refusal is a ProblemError thrown before any state changes.
 */
export interface ExecutionApiDeps {
  engine: ExecutionEngine;
  db: Db;
  directory: ProcessDirectory;
  /** Puts a request on the engine work queue (JetStream, or in memory when embedded). */
  enqueue: (request: ExecutionRequest) => Promise<void>;
  now?: () => Date;
  /** Reads values the engine stored in blob storage, so records show them. */
  readValue?: ValueReader;
  /** Rows of executions written whole by one commit, so a synchronous caller need not read them back. */
  finishedRows?: RecentlyFinishedRows;
  /** How long a synchronous run's events may be held back to be written by one commit (`ExecutionRun.hold`); 0 writes its start first. */
  syncRunHoldMs?: number;
  /**
   * The process as the engine last fetched it, maybe stale; given where the process's revision is
   * read from the database (distributed Weft), so a read can check it in its own statement.
   */
  cachedProcess?: (processId: string) => ProcessRecord | undefined;
}

/** An attempt on a cached process record that must be made again with the process read afresh. */
class CachedProcessMayBeStale extends Error {}

/** The process's catalog stream at the revision the record is of. */
const requiredRevision = (process: ProcessRecord): StreamAtVersion[] => [
  { streamId: processStreamId(process.id), version: process.revision },
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `2026-11-21`, `2026-11-21T12:00`, `2026-11-21T12:00:00.5Z`, `…+01:00`; `new Date` alone takes `1` too. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
const DEFAULT_WAIT_SECONDS = 30;
const MAX_WAIT_SECONDS = 300;
/** Why a synchronous caller's wait ends (an own reason: abort() without one builds a DOMException per call). */
const WAIT_OVER = Symbol('wait over');

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** The trace id inside a W3C traceparent (`00-<trace id>-<span id>-<flags>`). */
const traceIdOf = (traceparent: string | undefined): string | undefined => {
  const traceId = traceparent?.split('-')[1];
  return traceId && /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId) ? traceId : undefined;
};

const requireActor = (context: MessageContext): Actor => {
  if (!context.actor) throw new ProblemError(401, 'no authenticated actor');
  return context.actor;
};

const mayTouchProcess = (actor: Actor, processId: string): void => {
  // An empty list restricts to nothing (the gateway no longer issues one; older keys stay contained).
  if (actor.processIds && !actor.processIds.includes(processId)) {
    throw forbidden(`this API key may not use process ${processId}`);
  }
};

/** Runs a check that throws a 400; its violations join `errors` so one answer lists them all. */
function collectViolations<T>(errors: ProblemViolation[], check: () => T, fallback: T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ProblemError) || error.status !== 400) throw error;
    errors.push(...(error.problem.errors ?? [{ path: '/', message: error.message }]));
    return fallback;
  }
}

export class ExecutionApi {
  /** The records synchronous runs answer with: runs that finish together read theirs in one statement. */
  private readonly finishedRecords: ReadBatcher<string, ExecutionRecord>;

  constructor(private readonly deps: ExecutionApiDeps) {
    this.finishedRecords = new ReadBatcher((executionIds) => findExecutions(deps.db, executionIds, deps.readValue));
  }

  /** POST /processes/test/:processId */
  async testProcess(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const processId = call.params.processId;
    const cached = this.cachedVisibleProcess(actor, processId);
    return this.withCachedProcess(
      cached,
      (process) => this.test(call, context, actor, process, requiredRevision(process)),
      async () => this.test(call, context, actor, await this.visibleProcess(actor, processId)),
    );
  }

  private async test(
    call: HttpCall,
    context: MessageContext,
    actor: Actor,
    process: ProcessRecord,
    requires?: StreamAtVersion[],
  ): Promise<HttpReply> {
    const errors: ProblemViolation[] = [];
    const waitSeconds = collectViolations(errors, () => this.readWaitSeconds(call.query), DEFAULT_WAIT_SECONDS);
    const inputNodeId = single(call.query.inputNodeId) || undefined;
    const triggerNodeId = collectViolations(errors, () => chooseTriggerNode(process, inputNodeId), '');
    // Refused here, not by the queue's consumer: the caller would otherwise wait for nothing.
    collectViolations(errors, () => this.deps.engine.graphOf(process), undefined);
    collectViolations(errors, () => assertStorableInput(call.body), undefined);
    if (errors.length > 0)
      throw requires
        ? new CachedProcessMayBeStale('refused on the cached record')
        : badRequest('invalid test request', errors);
    const request: ExecutionRequest = {
      executionId: timeOrderedUuid(),
      processId: process.id,
      organizationId: process.organization_id,
      inputNodeId,
      inputData: call.body ?? {},
      triggeredByUserId: actor.userId,
      triggeredByUserName: actor.userName,
      source: 'test',
      correlationId: context.correlationId,
      traceId: traceIdOf(context.traceparent),
      requestedAt: (this.deps.now?.() ?? new Date()).toISOString(),
    };
    const record = await this.runAndWait(request, process, triggerNodeId, waitSeconds, true, requires);
    if (record && record.status !== 'running') return { status: 200, body: record };
    return {
      status: 202,
      body: { execution_id: request.executionId, status: 'running', ...(record?.queued ? { queued: true } : {}) },
      headers: { location: `/api/v1/processes/execution/${request.executionId}` },
    };
  }

  /** Internal: enqueue and wait (trigger's synchronous webhooks, testing service). */
  async runExecution(request: ExecutionRequest & { waitSeconds?: number }): Promise<ExecutionRecord> {
    // Only a fresh id is run held, the one way a run can require its process's revision.
    const cached = request.executionId ? undefined : this.deps.cachedProcess?.(request.processId);
    return this.withCachedProcess(
      cached?.organization_id === request.organizationId ? cached : undefined,
      (process) => this.run(request, process, requiredRevision(process)),
      async () => this.run(request, await this.deps.directory.getProcess(request.processId, request.organizationId)),
    );
  }

  private async run(
    request: ExecutionRequest & { waitSeconds?: number },
    process: ProcessRecord,
    requires?: StreamAtVersion[],
  ): Promise<ExecutionRecord> {
    const { waitSeconds, ...rest } = request;
    if (process.organization_id !== rest.organizationId) throw notFound(`process ${rest.processId} not found`);
    let triggerNodeId: string;
    try {
      triggerNodeId = chooseTriggerNode(process, rest.inputNodeId);
      this.deps.engine.graphOf(process);
      assertStorableInput(rest.inputData);
    } catch (error) {
      // Refused on the cached record: the process may have moved (a deleted one answers 404 first).
      throw requires ? new CachedProcessMayBeStale('refused on the cached record', { cause: error }) : error;
    }
    const executionId = rest.executionId || timeOrderedUuid();
    const record = await this.runAndWait(
      { ...rest, executionId },
      process,
      triggerNodeId,
      Math.min(waitSeconds ?? DEFAULT_WAIT_SECONDS, MAX_WAIT_SECONDS),
      !rest.executionId,
      requires,
    );
    if (!record)
      throw new ProblemError(503, `execution ${executionId} was accepted but has not started yet`, { executionId });
    return record;
  }

  /**
   * Where a process's revision is read from the database before each use (distributed Weft), a
   * synchronous run of a process this engine already has skips that read (a round trip, and a
   * statement at load): it runs the revision it has, and its one commit holds only while the
   * process's stream is still at that revision (`requires`), checked under the append lock. When
   * the process moved meanwhile (an edit, a delete), nothing of that run is on record, nothing of
   * it was answered, and the call is made again with the process read afresh, as is one the cached
   * record would refuse or that cannot run here at once: nothing is ever decided on a stale record.
   */
  private async withCachedProcess<T>(
    cached: ProcessRecord | undefined,
    attempt: (process: ProcessRecord) => Promise<T>,
    afresh: () => Promise<T>,
  ): Promise<T> {
    if (cached && (this.deps.syncRunHoldMs ?? 0) > 0) {
      try {
        return await attempt(cached);
      } catch (error) {
        const moved = error instanceof WrongExpectedVersionError && error.streamId === processStreamId(cached.id);
        if (!moved && !(error instanceof CachedProcessMayBeStale)) throw error;
      }
    }
    return afresh();
  }

  /** The process as this engine last fetched it, when the actor may see it; checked again by the commit. */
  private cachedVisibleProcess(actor: Actor, processId: string | undefined): ProcessRecord | undefined {
    if (!processId || !UUID.test(processId)) return undefined;
    const cached = this.deps.cachedProcess?.(processId);
    if (!cached || (!actor.system && cached.organization_id !== actor.organizationId)) return undefined;
    mayTouchProcess(actor, processId);
    return cached;
  }

  /** GET /processes/executions/:processId */
  async listExecutions(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const process = await this.visibleProcess(actor, call.params.processId);
    const errors: ProblemViolation[] = [];
    const { page, pageSize } = collectViolations(errors, () => parsePaging(call.query), { page: 1, pageSize: 1 });
    const status = single(call.query.status);
    if (status !== undefined && status !== '' && !EXECUTION_STATUSES.includes(status as ExecutionStatus)) {
      errors.push({ path: '/query/status', message: `must be one of ${EXECUTION_STATUSES.join(', ')}` });
    }
    const time = (name: 'from' | 'to'): Date | undefined => {
      const raw = single(call.query[name]);
      if (raw === undefined || raw === '') return undefined;
      const value = new Date(raw);
      if (!ISO_TIME.test(raw) || Number.isNaN(value.getTime())) {
        errors.push({ path: `/query/${name}`, message: 'must be an ISO 8601 time' });
      }
      return value;
    };
    const from = time('from');
    const to = time('to');
    if (errors.length > 0) throw badRequest('invalid query parameters', errors);
    const body = await listExecutions(this.deps.db, process.id, {
      page,
      pageSize,
      status: status ? (status as ExecutionStatus) : undefined,
      from,
      to,
    });
    return { status: 200, body };
  }

  /** GET /processes/execution/:id */
  async getExecution(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    return { status: 200, body: await this.visibleExecution(requireActor(context), call.params.id) };
  }

  /** Internal read of one record. */
  async getExecutionInternal(request: { executionId: string; organizationId?: string }): Promise<ExecutionRecord> {
    const record = UUID.test(request.executionId)
      ? await findExecution(this.deps.db, request.executionId, this.deps.readValue)
      : undefined;
    if (!record || (request.organizationId && record.organization_id !== request.organizationId)) {
      throw notFound(`execution ${request.executionId} not found`);
    }
    return record;
  }

  /** POST /processes/execution/:id/cancel */
  async cancelExecution(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const record = await this.visibleExecution(actor, call.params.id);
    await this.deps.engine.cancel(record.id, actor.userId);
    return { status: 200, body: await this.visibleExecution(actor, record.id) };
  }

  /** GET /processes/execution-stats/:processId */
  async executionStats(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const processId = call.params.processId;
    // A process this engine has, of the caller's organization: its revision is checked in the
    // statistics' own statement (one round trip, not two). Any other call (an unknown id, another
    // organization's process) is checked first as always and reads no statistics when refused.
    const known = processId && UUID.test(processId) ? this.deps.cachedProcess?.(processId) : undefined;
    if (known && (actor.system || known.organization_id === actor.organizationId)) {
      mayTouchProcess(actor, processId as string);
      const stats = await executionStatsAtRevision(this.deps.db, known.id, known.revision);
      if (stats) return { status: 200, body: stats };
    }
    const process = await this.visibleProcess(actor, processId);
    return { status: 200, body: await executionStats(this.deps.db, process.id) };
  }

  /**
   * Runs the request on this engine at once when it has room (accepted and started in one commit);
   * otherwise records the acceptance first, so the id is readable and cancellable before the caller
   * has it, and queues the request for any engine.
   */
  private async runAndWait(
    request: ExecutionRequest,
    process: ProcessRecord,
    triggerNodeId: string,
    waitSeconds: number,
    freshId: boolean,
    requires?: StreamAtVersion[],
  ): Promise<ExecutionRecord | undefined> {
    const holdMs = freshId ? (this.deps.syncRunHoldMs ?? 0) : 0;
    const started = await this.deps.engine
      .startNow(request, process, triggerNodeId, { holdMs, requires })
      .catch((error: unknown) => {
        // Refused before anything ran (a start too large, ...): maybe only on the cached record.
        throw requires ? new CachedProcessMayBeStale('refused on the cached record', { cause: error }) : error;
      });
    // Queued, it would be accepted on what the cached record says.
    if (!started && requires) throw new CachedProcessMayBeStale('no room to run it here at once');
    if (!started) await this.acceptAndQueue(request, triggerNodeId);
    const finishedInRecord = async (): Promise<boolean> => {
      const record = await this.finishedRecords.read(request.executionId);
      return record !== undefined && record.status !== 'running';
    };
    const stopWaiting = new AbortController();
    const finished = this.deps.engine.waitForFinish(
      request.executionId,
      waitSeconds * 1000,
      finishedInRecord,
      stopWaiting.signal,
    );
    if (started) {
      // A held run whose events could not be written ends the wait at once, with its error; and
      // nothing is said of a run before it is on record.
      try {
        await Promise.race([finished, started.unrecorded]);
      } finally {
        stopWaiting.abort(WAIT_OVER);
      }
      await started.recorded();
      const rows = this.deps.finishedRows?.take(request.executionId);
      if (rows) return recordOfFinishedRows(rows, this.deps.readValue);
    } else await finished;
    return this.finishedRecords.read(request.executionId);
  }

  private async acceptAndQueue(request: ExecutionRequest, triggerNodeId: string): Promise<void> {
    await this.deps.engine.accept(request, triggerNodeId);
    try {
      await this.deps.enqueue(request);
    } catch (error) {
      await this.deps.engine
        .failQueued(request.executionId, 'the execution request could not be queued')
        .catch(() => undefined);
      throw error;
    }
  }

  private readWaitSeconds(query: HttpCall['query']): number {
    const raw = single(query.waitSeconds);
    if (raw === undefined || raw === '') return DEFAULT_WAIT_SECONDS;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > MAX_WAIT_SECONDS) {
      throw badRequest('invalid waitSeconds', [
        { path: '/query/waitSeconds', message: `must be a number from 0 to ${MAX_WAIT_SECONDS}` },
      ]);
    }
    return value;
  }

  /** The process when the actor may see it: 404 for unknown or another organization's, 403 outside the key's processes. */
  private async visibleProcess(actor: Actor, processId: string | undefined): Promise<ProcessRecord> {
    if (!processId || !UUID.test(processId)) throw notFound(`process ${processId ?? ''} not found`);
    mayTouchProcess(actor, processId);
    const process = await this.deps.directory.getProcess(processId, actor.system ? undefined : actor.organizationId);
    if (!actor.system && process.organization_id !== actor.organizationId)
      throw notFound(`process ${processId} not found`);
    return process;
  }

  private async visibleExecution(actor: Actor, executionId: string | undefined): Promise<ExecutionRecord> {
    const record =
      executionId && UUID.test(executionId)
        ? await findExecution(this.deps.db, executionId, this.deps.readValue)
        : undefined;
    if (!record || (!actor.system && record.organization_id !== actor.organizationId)) {
      throw notFound(`execution ${executionId ?? ''} not found`);
    }
    mayTouchProcess(actor, record.process_id);
    return record;
  }
}
