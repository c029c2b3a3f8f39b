import { ProblemError, type ExecutionRequest, type ProcessNode, type ProcessRecord } from '@weft/contracts';
import type { EventStore } from '@weft/event-store';
import type { Logger } from '@weft/observability';
import { firingExecutionId } from '../domain/execution-id.js';
import type { Clock } from './clock.js';
import type { FireOptions, ListenerContext, ListenerFactory, TriggerListener } from './listener-port.js';
import type { ListenerStatusBoard } from './listener-status.js';
import type { CatalogPort, ExecutionPort, FilePort } from './trigger-ports.js';

/** Why a listener's signal aborts: its process stopped (or lost the node), or this service shuts down. */
export type StopReason = 'process-stopped' | 'node-changed' | 'shutdown';

export interface SupervisorDeps {
  /** Listener factory per `config.triggerType`; `manual` nodes get none. */
  factories: Readonly<Record<string, ListenerFactory>>;
  catalog: CatalogPort;
  executions: ExecutionPort;
  files: FilePort;
  store: EventStore;
  clock: Clock;
  logger: Logger;
  status: ListenerStatusBoard;
}

interface SupervisedListener {
  node: ProcessNode;
  /** The config the listener was built from; a changed config rebuilds it. */
  configText: string;
  abort: AbortController;
  listener?: TriggerListener;
  running: boolean;
}

interface SupervisedProcess {
  organizationId: string;
  revision: number;
  listeners: Map<string, SupervisedListener>;
}

const labelOf = (node: ProcessNode): string => (typeof node.config.label === 'string' ? node.config.label : node.id);
const triggerTypeOf = (node: ProcessNode): string =>
  typeof node.config.triggerType === 'string' ? node.config.triggerType : 'manual';

/** Input nodes that need a listener: every trigger type but `manual`. */
export const listenedInputNodes = (process: ProcessRecord): ProcessNode[] =>
  process.nodes.filter((node) => node.type === 'inputNode' && triggerTypeOf(node) !== 'manual');

/**
 * Runs one listener per input node of every running process (spec "Process running flag"): each in
 * its own cancellable worker, started on ProcessStarted, stopped on ProcessStopped, rebuilt when a
 * running process's input node changes, restored for every running process after a restart. A
 * listener that fails to start is marked failing and retried at the next resync; it never stops others.
 */
export class ListenerSupervisor {
  private readonly processes = new Map<string, SupervisedProcess>();
  /** The record each supervised process was last reconciled from (webhooks read its output nodes). */
  private readonly records = new Map<string, ProcessRecord>();
  /** One reconcile at a time per process, in arrival order. */
  private readonly queues = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(private readonly deps: SupervisorDeps) {}

  /** Listener statuses on this replica (the listeners endpoint). */
  get statusBoard(): ListenerStatusBoard {
    return this.deps.status;
  }

  /** Brings the process's listeners in line with its current state in the catalog. */
  reconcile(processId: string): Promise<void> {
    const previous = this.queues.get(processId) ?? Promise.resolve();
    const next = previous.then(() => this.reconcileNow(processId));
    const settled = next.catch(() => undefined);
    this.queues.set(processId, settled);
    void settled.then(() => {
      if (this.queues.get(processId) === settled) this.queues.delete(processId);
    });
    return next;
  }

  /** Reconciles every running process, and the known ones that no longer run (restart, resync). */
  async restoreAll(): Promise<void> {
    const running = await this.deps.catalog.listRunningProcesses();
    const runningIds = new Set(running.map((entry) => entry.processId));
    const work = running
      .filter((entry) => this.needsReconcile(entry.processId, entry.revision))
      .map((entry) => entry.processId);
    for (const processId of this.processes.keys()) if (!runningIds.has(processId)) work.push(processId);
    const results = await Promise.allSettled(work.map((processId) => this.reconcile(processId)));
    results.forEach((result, index) => {
      if (result.status === 'rejected') {
        this.deps.logger.error(
          { err: result.reason, processId: work[index] },
          'could not restore the listeners of a process',
        );
      }
    });
  }

  /** The running process as this replica's listeners know it; undefined when it runs none here. */
  processOf(processId: string): ProcessRecord | undefined {
    return this.records.get(processId);
  }

  /** Stops every listener (service shutdown); running executions are the engine's and go on. */
  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.queues.values()]);
    await Promise.all([...this.processes.keys()].map((processId) => this.stopProcess(processId, 'shutdown')));
  }

  private needsReconcile(processId: string, revision: number | undefined): boolean {
    const known = this.processes.get(processId);
    if (!known || revision === undefined || known.revision !== revision) return true;
    return [...known.listeners.values()].some((entry) => !entry.running);
  }

  private async reconcileNow(processId: string): Promise<void> {
    if (this.stopped) return;
    const process = await this.currentProcess(processId);
    if (!process?.is_running) return this.stopProcess(processId, 'process-stopped');
    const supervised: SupervisedProcess = this.processes.get(processId) ?? {
      organizationId: process.organization_id,
      revision: -1,
      listeners: new Map(),
    };
    this.processes.set(processId, supervised);
    const wanted = new Map(listenedInputNodes(process).map((node) => [node.id, node]));
    for (const [nodeId, entry] of supervised.listeners) {
      const node = wanted.get(nodeId);
      if (!node || JSON.stringify(node.config) !== entry.configText || !entry.running) {
        await this.stopListener(processId, entry, 'node-changed');
        supervised.listeners.delete(nodeId);
        if (!node) this.deps.status.forget(processId, nodeId);
      }
    }
    for (const node of wanted.values()) {
      if (!supervised.listeners.has(node.id)) await this.startListener(process, supervised, node);
    }
    supervised.revision = process.revision;
    this.records.set(processId, process);
  }

  private async currentProcess(processId: string): Promise<ProcessRecord | undefined> {
    try {
      return await this.deps.catalog.getProcess(processId);
    } catch (error) {
      if (error instanceof ProblemError && error.status === 404) return undefined;
      throw error;
    }
  }

  private async startListener(process: ProcessRecord, supervised: SupervisedProcess, node: ProcessNode): Promise<void> {
    const triggerType = triggerTypeOf(node);
    const entry: SupervisedListener = {
      node,
      configText: JSON.stringify(node.config),
      abort: new AbortController(),
      running: false,
    };
    supervised.listeners.set(node.id, entry);
    this.deps.status.open(process.id, { id: node.id, label: labelOf(node), triggerType });
    const context = this.contextFor(process, node, entry.abort.signal);
    try {
      const factory = this.deps.factories[triggerType];
      if (!factory) throw new Error(`no listener for trigger type "${triggerType}" in this build`);
      entry.listener = factory(context);
      await entry.listener.start();
      entry.running = true;
      if (this.deps.status.of(process.id, node.id)?.state === 'starting') context.report({ state: 'listening' });
    } catch (error) {
      // Retried at the next resync (needsReconcile sees it not running); other listeners go on.
      context.report({
        state: 'failing',
        lastError: { message: `could not start: ${(error as Error).message}`, at: this.deps.clock.now().toISOString() },
      });
    }
  }

  private async stopListener(processId: string, entry: SupervisedListener, reason: StopReason): Promise<void> {
    entry.abort.abort(reason);
    try {
      await entry.listener?.stop();
    } catch (error) {
      this.deps.logger.error({ err: error, processId, nodeId: entry.node.id }, 'a listener failed to stop cleanly');
    }
    this.deps.status.close(processId, entry.node.id);
  }

  private async stopProcess(processId: string, reason: StopReason): Promise<void> {
    const supervised = this.processes.get(processId);
    if (!supervised) return;
    this.processes.delete(processId);
    this.records.delete(processId);
    await Promise.all([...supervised.listeners.values()].map((entry) => this.stopListener(processId, entry, reason)));
  }

  private contextFor(process: ProcessRecord, node: ProcessNode, signal: AbortSignal): ListenerContext {
    const { catalog, executions, files, clock, logger, status } = this.deps;
    const organizationId = process.organization_id;
    const where = { processId: process.id, nodeId: node.id };
    const nodeLogger = logger.child({ ...where, triggerType: triggerTypeOf(node) });
    return {
      organizationId,
      processId: process.id,
      nodeId: node.id,
      nodeLabel: labelOf(node),
      config: structuredClone(node.config),
      fire: async (inputData: unknown, options: FireOptions) => {
        // After ProcessStopped nothing new starts, even from a poll or request already under way.
        if (signal.aborted) throw new ProblemError(409, `process ${process.id} is not running`);
        // Asked at each firing: a replica that missed ProcessStopped must not start anything.
        const current = await this.currentProcess(process.id);
        if (!current?.is_running) {
          void this.reconcile(process.id).catch(() => undefined);
          throw new ProblemError(409, `process ${process.id} is not running`);
        }
        const request = firingRequest(process, node.id, inputData, options, clock.now());
        await executions.enqueue(request);
        return { executionId: request.executionId };
      },
      report: (update) => {
        status.update(process.id, node.id, update);
        if (update.lastError) nodeLogger.warn({ ...where, error: update.lastError.message }, 'listener error');
      },
      connection: (connectionId) => catalog.connection(connectionId, organizationId),
      updateConnectionData: (connectionId, data) => catalog.replaceConnectionData(connectionId, organizationId, data),
      storeFile: (name, content, contentType) =>
        files.store(`${organizationId}/triggers/${process.id}/${node.id}`, content, contentType, name),
      store: this.deps.store,
      signal,
      now: () => clock.now(),
      logger: nodeLogger,
    };
  }
}

/** The execution request of one firing; its id is derived from the dedupe key, so a refire starts nothing new. */
export function firingRequest(
  process: Pick<ProcessRecord, 'id' | 'organization_id'>,
  nodeId: string,
  inputData: unknown,
  options: FireOptions & { correlationId?: string },
  now: Date,
): ExecutionRequest {
  return {
    executionId: firingExecutionId(process.id, nodeId, options.dedupeKey),
    processId: process.id,
    organizationId: process.organization_id,
    inputNodeId: nodeId,
    inputData,
    source: 'trigger',
    traceId: options.traceId,
    correlationId: options.correlationId,
    requestedAt: now.toISOString(),
  };
}
