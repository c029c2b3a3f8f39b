import { randomUUID } from 'node:crypto';
import type { ExecutionRequest, ProcessRecord } from '@weft/contracts';
import { openDatabase, PostgresEventStore, type Database, type EventStore } from '@weft/event-store';
import { createLogger } from '@weft/observability';
import { scheduleListenerFactory } from '../../src/adapters/schedule/schedule-listener.js';
import type { ListenerFactory } from '../../src/application/listener-port.js';
import { ListenerStatusBoard } from '../../src/application/listener-status.js';
import { ListenerSupervisor } from '../../src/application/listener-supervisor.js';
import type { CatalogPort, ExecutionPort } from '../../src/application/trigger-ports.js';
import type { ScheduleClock } from './schedule-clock.js';

/** A running process with one scheduled input node, as the catalog would answer it. */
export function scheduledProcess(config: Record<string, unknown>): ProcessRecord {
  return {
    id: randomUUID(),
    organization_id: randomUUID(),
    name: 'Scheduled',
    description: '',
    max_retries: 0,
    is_running: true,
    locked: false,
    error_webhook_url: null,
    timeout_seconds: 0,
    nodes: [
      {
        id: 'tick',
        type: 'inputNode',
        position: { x: 0, y: 0 },
        config: { label: 'Tick', triggerType: 'schedule', ...config },
      },
      { id: 'out', type: 'outputNode', position: { x: 0, y: 0 }, config: { label: 'Out' } },
    ],
    edges: [],
    versions: [],
    created_by: 'test',
    created_by_id: 'test',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    revision: 1,
  };
}

/** The catalog's answers for one process (its running flag switchable); the store under test is real. */
export function catalogOf(process: ProcessRecord): CatalogPort & { setRunning(running: boolean): void } {
  let current = process;
  return {
    setRunning(running) {
      current = { ...current, is_running: running, revision: current.revision + 1 };
    },
    getProcess: async () => current,
    listRunningProcesses: async () =>
      current.is_running
        ? [{ processId: current.id, organizationId: current.organization_id, revision: current.revision }]
        : [],
    connection: async () => {
      throw new Error('no connections here');
    },
    replaceConnectionData: async () => undefined,
    dataBlockSchema: async () => ({}),
  };
}

/** Records every queued request: what the engine's work queue would receive. */
export class QueuedRequests implements ExecutionPort {
  readonly requests: ExecutionRequest[] = [];

  async enqueue(request: ExecutionRequest): Promise<void> {
    this.requests.push(request);
  }

  async run(): Promise<never> {
    throw new Error('schedules never wait for their executions');
  }

  /** Distinct executions, in first-queued order. */
  executionIds(): string[] {
    return [...new Set(this.requests.map((request) => request.executionId))];
  }

  triggeredAt(): string[] {
    const seen = new Set<string>();
    return this.requests.flatMap((request) => {
      if (seen.has(request.executionId)) return [];
      seen.add(request.executionId);
      return [(request.inputData as { triggered_at: string }).triggered_at];
    });
  }
}

export function scheduleSupervisor(deps: {
  store: EventStore;
  clock: ScheduleClock;
  catalog: CatalogPort;
  queue: ExecutionPort;
  /** Listeners of other trigger types beside the schedule's. */
  factories?: Record<string, ListenerFactory>;
}): ListenerSupervisor {
  return new ListenerSupervisor({
    factories: { schedule: scheduleListenerFactory({ clock: deps.clock }), ...deps.factories },
    catalog: deps.catalog,
    executions: deps.queue,
    files: {
      store: async () => {
        throw new Error('no files here');
      },
    },
    store: deps.store,
    clock: deps.clock,
    logger: createLogger('trigger-test', { level: 'silent' }),
    status: new ListenerStatusBoard(),
  });
}

/** A fresh event store on the default test database for each test, closed after it (registers the jest hooks). */
export function eachTestEventStore(): { readonly store: PostgresEventStore } {
  let database: Database;
  let store: PostgresEventStore;
  beforeEach(async () => {
    database = await openDatabase();
    store = await PostgresEventStore.open(database);
  });
  afterEach(async () => {
    await store.close();
    await database.close();
  });
  return {
    get store() {
      return store;
    },
  };
}
