import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { engineQueues, type ExecutionRequest, type WorkQueueSpec } from '@weft/contracts';
import type { Bus, Subscription } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import { PostgresEventStore, type EventStore } from '@weft/event-store';
import { createLogger, type Logger } from '@weft/observability';
import { HttpErrorWebhookSender, type ErrorWebhookOptions } from './adapters/http/error-webhook-notifier.js';
import { BusProcessDirectory } from './adapters/nats/catalog-directory.js';
import { consumeExecutionRequests } from './adapters/nats/execution-request-consumer.js';
import { createNodePalette, type NodePalette } from './adapters/nodes/node-palette.js';
import { nodeFileSource } from './adapters/nodes/node-files.js';
import { createBlobStorage, type BlobStorage } from '@weft/blob-storage';
import { blobStorageSink } from './adapters/nodes/blob-storage-sink.js';
import { busDataBlockSchemas } from './adapters/nodes/data-block-schemas.js';
import { blobStorageModels } from './adapters/nodes/onnx-models.js';
import { blobValueStore } from './adapters/blob-value-store.js';
import { registerExecutionUpcasters } from './domain/execution/upcasters.js';
import type { BlobSink } from './adapters/nodes/integration-node.js';
import { migrateEngineSchema } from './adapters/postgres/engine-schema.js';
import { postgresExecutionCommit } from './adapters/postgres/execution-commit.js';
import { processRevisions } from './adapters/postgres/process-revisions.js';
import { PostgresErrorWebhookQueue } from './adapters/postgres/error-webhook-queue.js';
import { PostgresExecutionDeadLetters } from './adapters/postgres/execution-dead-letters.js';
import { PostgresExecutionLeases } from './adapters/postgres/execution-leases.js';
import { PostgresParkedWaits } from './adapters/postgres/parked-waits.js';
import type { ProcessDirectory } from './application/engine-ports.js';
import { CachedProcessDirectory } from './application/cached-process-directory.js';
import { ExecutionApi } from './application/execution-api.js';
import { ReadBatcher } from './application/read-batcher.js';
import { KnownProcessRevisions } from './application/known-process-revisions.js';
import type { ErrorWebhookPolicy } from './application/error-webhook-deliveries.js';
import { ExecutionEngine } from './application/execution-engine.js';
import type { EventSizeLimits } from './application/event-values.js';
import { ExecutionSlots } from './application/execution-slots.js';
import { UndeliverableRequests } from './application/undeliverable-requests.js';
import { finishedAmong } from './projections/execution-queries.js';
import { executionsProjection } from './projections/executions-projection.js';
import { RecentlyFinishedRows } from './projections/recently-finished-rows.js';

/** What the engine needs from its composition root. */
export interface EngineDeps {
  store: EventStore;
  bus: Bus;
  config: WeftConfig;
  options?: EngineOptions;
}

export interface EngineOptions {
  /** Execution requests handled at once by this replica; default 64. */
  concurrency?: number;
  /** Overrides of WEFT_ENGINE_MAX_RUNNING_EXECUTIONS, WEFT_EXECUTION_MAX_DELIVER, WEFT_SCRIPT_* (tests). */
  limits?: Partial<WeftConfig['engineLimits']>;
  /** How long a lease lasts without renewal before another engine resumes the execution; default 15 s. */
  leaseMs?: number;
  /** Lease renewal and orphan scan period; default leaseMs / 3. */
  maintenanceMs?: number;
  retryDelayMs?: (attempt: number) => number;
  /** The wait before a scheduled retry; default a timer on `now` (tests move their clock instead of waiting). */
  retrySleep?: (at: Date, signal: AbortSignal) => Promise<void>;
  /** Overrides WEFT_ERROR_WEBHOOK_* (tests). */
  errorWebhook?: ErrorWebhookOptions & Partial<ErrorWebhookPolicy>;
  /** The engine's clock; default the system clock (tests move it to wake parked waits). */
  now?: () => Date;
  blobs?: BlobSink;
  /** Overrides WEFT_EVENT_MAX_BYTES and WEFT_EVENT_VALUE_INLINE_MAX_BYTES (tests). */
  eventLimits?: EventSizeLimits;
  /** The work queue and durable consumer; default engineQueues.executionRequests / 'engine-executions' (tests isolate themselves). */
  queue?: { spec: WorkQueueSpec<ExecutionRequest>; durable: string };
  /** Where processes and connections come from; default the catalog over the bus. */
  directory?: ProcessDirectory;
  /** Whether this replica takes work from the queue (false: serve reads only); default true. */
  consume?: boolean;
  /** How long a node's events may wait for the run's next ones before they are committed; default 10 ms. */
  lazyAppendMs?: number;
  /** How long a node that touches nothing outside may run before its start is recorded on its own (default 1 s). */
  carriedStartMaxMs?: number;
  /** Overrides WEFT_SYNC_RUN_HOLD_MS (tests). */
  syncRunHoldMs?: number;
  logger?: Logger;
}

/** The engine wired: palette, leases, engine, request handlers and the queue consumer. */
export class EngineRuntime {
  private consumer: Subscription | undefined;

  private constructor(
    readonly engine: ExecutionEngine,
    readonly api: ExecutionApi,
    private readonly palette: NodePalette,
    private readonly deps: EngineDeps,
    private readonly logger: Logger,
    private readonly undeliverable: UndeliverableRequests,
    /** Requests that failed every delivery and whose process could not be loaded (replay from here). */
    readonly deadLetters: PostgresExecutionDeadLetters,
    /** Files and large event values; the engine's own (closed on stop). */
    private readonly valueBlobs: BlobStorage,
    /** Stops keeping process revisions from the store's commits (embedded Weft). */
    private readonly stopHearingCommits: () => void,
  ) {}

  /** Migrates the engine's tables and registers its inline projection; does not take work yet. */
  static async open(deps: EngineDeps): Promise<EngineRuntime> {
    const options = deps.options ?? {};
    const logger = options.logger ?? createLogger('engine');
    await migrateEngineSchema(deps.store.db);
    // Without an explicit sink, files go to WEFT_S3_* storage, else to the data dir's blobs folder.
    const ownBlobs = options.blobs ? undefined : createBlobStorage(deps.config);
    const blobs = options.blobs ?? blobStorageSink(ownBlobs!);
    // Event values too large to store inline (outputs, trigger data, loop items) go to the same storage.
    const valueBlobs = ownBlobs ?? createBlobStorage(deps.config);
    const values = blobValueStore(valueBlobs);
    const palette = createNodePalette({
      blobs,
      files: nodeFileSource(valueBlobs, deps.config.mediaNodes.fileMaxBytes),
      media: deps.config.mediaNodes,
      blockPrivate: deps.config.outboundBlockPrivate,
      limits: deps.config.events,
      httpResponseMaxBytes: deps.config.httpResponseMaxBytes,
      serviceDatabaseUrl: deps.config.databaseUrl,
      dataBlocks: busDataBlockSchemas(deps.bus),
      modelBlobs: blobStorageModels(valueBlobs),
      models: deps.config.models,
      scriptIsolates: {
        maxMemoryMb: limitsOf(deps).scriptMaxMemoryMb,
        maxWarmIsolates: limitsOf(deps).scriptMaxWarmIsolates,
        memoryBudgetMb: limitsOf(deps).scriptMemoryBudgetMb,
        runsPerIsolate: limitsOf(deps).scriptRunsPerIsolate,
      },
    });
    const leaseMs = options.leaseMs ?? 15_000;
    const durability = deps.config.engineDurability;
    const leases = new PostgresExecutionLeases(
      deps.store.db,
      `engine-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
      leaseMs,
    );
    // On our own store the projection and leases ride in the engine's group commit; any other
    // EventStore gets the projection inline and leases by separate statements.
    const ownCommit = deps.store instanceof PostgresEventStore;
    if (!ownCommit) deps.store.registerProjections([executionsProjection]);
    registerExecutionUpcasters(deps.store);
    // Concurrent runs check their processes' revisions in one statement.
    const revisions = new ReadBatcher((processIds: string[]) => processRevisions(deps.store.db, processIds));
    const readRevision = async (processId: string): Promise<number> => (await revisions.read(processId)) ?? 0;
    let revisionOf = readRevision;
    let stopHearingCommits = (): void => undefined;
    // Embedded Weft: the database is its own, every append goes through this store, so the
    // revisions are known from its commits instead of read before each run.
    if (deps.store instanceof PostgresEventStore && deps.store.database.onlyWriter === true) {
      const known = new KnownProcessRevisions(readRevision);
      const stopHearing = deps.store.onCommit((events) => known.observe(events));
      stopHearingCommits = () => void stopHearing();
      revisionOf = (processId) => known.revisionOf(processId);
    }
    let cachedDirectory: CachedProcessDirectory | undefined;
    const directory =
      options.directory ??
      (cachedDirectory = new CachedProcessDirectory(new BusProcessDirectory(deps.bus), revisionOf));
    const queue = options.queue?.spec ?? engineQueues.executionRequests;
    // Synchronous runs written whole by one commit are answered from the rows it wrote.
    const finishedRows = new RecentlyFinishedRows();
    const engine = new ExecutionEngine({
      store: deps.store,
      directory,
      executors: palette.executors,
      leases,
      statusReader: { finishedAmong: (ids) => finishedAmong(deps.store.db, ids) },
      errorWebhookQueue: new PostgresErrorWebhookQueue(deps.store.db),
      errorWebhookSender: new HttpErrorWebhookSender({
        blockPrivate: deps.config.outboundBlockPrivate,
        timeoutMs: options.errorWebhook?.timeoutMs ?? durability.errorWebhookTimeoutMs,
        maxResponseBytes: options.errorWebhook?.maxResponseBytes ?? durability.errorWebhookMaxResponseBytes,
      }),
      errorWebhookPolicy: {
        maxAttempts: durability.errorWebhookMaxAttempts,
        backoffMs: durability.errorWebhookBackoffMs,
        maxBackoffMs: durability.errorWebhookMaxBackoffMs,
        // An attempt's claim outlives its timeout, so only a dead engine's claim lapses.
        claimMs: 2 * (options.errorWebhook?.timeoutMs ?? durability.errorWebhookTimeoutMs) + 5000,
        ...policyOverrides(options.errorWebhook),
      },
      parkedWaits: new PostgresParkedWaits(deps.store.db),
      parkAfterMs: durability.parkAfterSeconds * 1000,
      wakeBatch: durability.wakeBatch,
      maxResumes: durability.maxResumes,
      now: options.now,
      logger,
      retryDelayMs: options.retryDelayMs,
      retrySleep: options.retrySleep,
      commit:
        deps.store instanceof PostgresEventStore
          ? postgresExecutionCommit(deps.store, leases, undefined, finishedRows)
          : undefined,
      slots: new ExecutionSlots(limitsOf(deps).maxRunningExecutions),
      leasesFollowEvents: ownCommit,
      eventStorage: { limits: options.eventLimits ?? deps.config.events, values },
      maintenanceMs: options.maintenanceMs ?? Math.max(100, Math.floor(leaseMs / 3)),
      maxNodeConfigBytes: deps.config.nodeConfigMaxBytes,
      lazyAppendMs: options.lazyAppendMs,
      carriedStartMaxMs: options.carriedStartMaxMs,
    });
    const api = new ExecutionApi({
      engine,
      db: deps.store.db,
      directory,
      enqueue: (request) => deps.bus.enqueue(queue, request, { msgId: request.executionId }),
      readValue: (ref) => values.get(ref),
      syncRunHoldMs: options.syncRunHoldMs ?? durability.syncRunHoldMs,
      finishedRows,
      // Where revisions are read from the database, the statistics read checks it in its statement.
      cachedProcess:
        cachedDirectory && revisionOf === readRevision ? (processId) => cachedDirectory.peek(processId) : undefined,
    });
    const deadLetters = new PostgresExecutionDeadLetters(deps.store.db);
    const undeliverable = new UndeliverableRequests({
      directory,
      commit:
        deps.store instanceof PostgresEventStore
          ? postgresExecutionCommit(deps.store, leases)
          : async (batch) => void (await deps.store.appendMany(batch)),
      deadLetters,
      logger,
      now: options.now,
    });
    return new EngineRuntime(
      engine,
      api,
      palette,
      deps,
      logger,
      undeliverable,
      deadLetters,
      valueBlobs,
      stopHearingCommits,
    );
  }

  /** Starts taking execution requests and resuming executions orphaned by dead engines. */
  async start(): Promise<void> {
    if (this.deps.options?.consume === false) return;
    this.consumer = await consumeExecutionRequests(this.deps.bus, this.engine, this.logger, {
      concurrency: this.deps.options?.concurrency,
      queue: this.deps.options?.queue,
      undeliverable: this.undeliverable,
      maxDeliver: limitsOf(this.deps).executionMaxDeliver,
    });
    this.engine.startMaintenance();
  }

  async stop(): Promise<void> {
    await this.consumer?.unsubscribe();
    this.consumer = undefined;
    await this.engine.stop();
    await this.palette.close();
    await this.valueBlobs.close();
    this.stopHearingCommits();
  }
}

const limitsOf = (deps: EngineDeps): WeftConfig['engineLimits'] => ({
  ...deps.config.engineLimits,
  ...deps.options?.limits,
});

/** The retry policy fields of the test overrides (the others configure the sender). */
function policyOverrides(options: EngineOptions['errorWebhook']): Partial<ErrorWebhookPolicy> {
  if (!options) return {};
  const { maxAttempts, backoffMs, maxBackoffMs, claimMs, batch } = options;
  return Object.fromEntries(
    Object.entries({ maxAttempts, backoffMs, maxBackoffMs, claimMs, batch }).filter(([, value]) => value !== undefined),
  );
}
