import { hostname } from 'node:os';
import type { Bus, Subscription } from '@weft/bus';
import { createBlobStorage, type BlobStorage } from '@weft/blob-storage';
import type { WeftConfig } from '@weft/config';
import type { EventStore } from '@weft/event-store';
import { createLogger, type Logger } from '@weft/observability';
import { blobFiles } from './adapters/blob-files.js';
import { mailListenerFactories } from './adapters/mail-registration.js';
import { busCatalog } from './adapters/nats/bus-catalog.js';
import { busExecutions } from './adapters/nats/bus-executions.js';
import { followProcessLifecycle } from './adapters/nats/process-lifecycle.js';
import { scheduleListenerFactory } from './adapters/schedule/schedule-listener.js';
import { webhookListenerFactory } from './adapters/webhook/webhook-listener.js';
import { WebhookRegistry } from './adapters/webhook/webhook-registry.js';
import { systemClock, type Clock } from './application/clock.js';
import type { ListenerFactory } from './application/listener-port.js';
import { ListenerStatusBoard } from './application/listener-status.js';
import { ListenerSupervisor } from './application/listener-supervisor.js';
import type { CatalogPort, ExecutionPort } from './application/trigger-ports.js';
import { WebhookRequests } from './application/webhook-requests.js';

/** What the trigger service needs from its composition root. */
export interface TriggerDeps {
  store: EventStore;
  bus: Bus;
  config: WeftConfig;
  options?: TriggerOptions;
}

export interface TriggerOptions {
  clock?: Clock;
  logger?: Logger;
  /** Extra or replacement listener factories by trigger type (tests). */
  factories?: Record<string, ListenerFactory>;
  /** Overrides of the catalog and engine ports (tests count firings). */
  catalog?: CatalogPort;
  executions?: ExecutionPort;
  /** Whether to follow process events and restore listeners (false: serve only); default true. */
  listen?: boolean;
}

/** The trigger service wired: supervisor, listener factories, webhook requests, lifecycle subscription. */
export class TriggerRuntime {
  private lifecycle: Subscription | undefined;
  private resync: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    readonly supervisor: ListenerSupervisor,
    readonly requests: WebhookRequests,
    private readonly deps: TriggerDeps,
    private readonly blobs: BlobStorage,
    private readonly logger: Logger,
  ) {}

  static open(deps: TriggerDeps): TriggerRuntime {
    const options = deps.options ?? {};
    const logger = options.logger ?? createLogger('trigger');
    const clock = options.clock ?? systemClock;
    const catalog = options.catalog ?? busCatalog(deps.bus);
    const executions = options.executions ?? busExecutions(deps.bus);
    const blobs = createBlobStorage(deps.config);
    const registry = new WebhookRegistry();
    const supervisor = new ListenerSupervisor({
      factories: {
        webhook: webhookListenerFactory(registry),
        schedule: scheduleListenerFactory({ clock }),
        ...mailListenerFactories(deps.config),
        ...options.factories,
      },
      catalog,
      executions,
      files: blobFiles(blobs),
      store: deps.store,
      clock,
      logger,
      status: new ListenerStatusBoard(),
    });
    const requests = new WebhookRequests({
      supervisor,
      registry,
      catalog,
      executions,
      clock,
      maxWaitSeconds: deps.config.triggers.webhookMaxWaitSeconds,
    });
    return new TriggerRuntime(supervisor, requests, deps, blobs, logger);
  }

  /** Follows process events, then restores the listeners of every running process and resyncs periodically. */
  async start(): Promise<void> {
    if (this.deps.options?.listen === false) return;
    const replica = this.deps.config.triggers.replicaId ?? hostname();
    this.lifecycle = await followProcessLifecycle(this.deps.bus, this.supervisor, `trigger-${durableToken(replica)}`);
    await this.restore();
    // Catches what an event could not tell (a catalog that was down, a failed listener start).
    this.resync = setInterval(() => void this.restore(), this.deps.config.triggers.resyncSeconds * 1000);
    this.resync.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resync);
    clearTimeout(this.retry);
    await this.lifecycle?.unsubscribe();
    this.lifecycle = undefined;
    await this.supervisor.stopAll();
    await this.blobs.close();
  }

  /** Restores listeners; when the catalog does not answer (it may start after us) it retries sooner than the resync. */
  private async restore(delayMs = RESTORE_RETRY_MS): Promise<void> {
    try {
      await this.supervisor.restoreAll();
    } catch (error) {
      if (this.stopped) return;
      const resyncMs = this.deps.config.triggers.resyncSeconds * 1000;
      this.logger.error({ err: error, retryInMs: Math.min(delayMs, resyncMs) }, 'could not list the running processes');
      clearTimeout(this.retry);
      if (delayMs < resyncMs) {
        this.retry = setTimeout(() => void this.restore(delayMs * 2), delayMs);
        this.retry.unref();
      }
    }
  }
}

/** First wait before asking the catalog again after it did not answer; doubles up to the resync period. */
const RESTORE_RETRY_MS = 1000;

/** A durable consumer name may not hold `.`, `*`, `>` or spaces. */
const durableToken = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, '_');
