import type { Bus } from '@weft/bus';
import type { WeftConfig } from '@weft/config';
import { migrate, type EventStore } from '@weft/event-store';
import { createLogger, type Logger } from '@weft/observability';
import { busCatalog, busEngine } from './adapters/nats/bus-ports.js';
import { BatchRunner } from './application/batch-runner.js';
import { TestCaseRequests } from './application/test-case-requests.js';
import { TestCaseTransfer } from './application/test-case-transfer.js';
import { TestRunRequests } from './application/test-run-requests.js';
import { TestRunner } from './application/test-runner.js';
import type { CatalogPort, Clock, EnginePort } from './application/testing-ports.js';
import { TESTING_MIGRATIONS_TABLE, testingMigrations } from './projections/testing-migrations.js';
import { testingProjections } from './projections/testing-projections.js';

/** What the testing service needs from its composition root. */
export interface TestingDeps {
  store: EventStore;
  bus: Bus;
  config: WeftConfig;
  options?: TestingOptions;
}

export interface TestingOptions {
  clock?: Clock;
  logger?: Logger;
  /** Replacements of the engine and catalog ports (tests). */
  engine?: EnginePort;
  catalog?: CatalogPort;
}

/** The testing service wired: read models migrated and projected inline, request handlers, batch runner. */
export class TestingRuntime {
  private constructor(
    readonly cases: TestCaseRequests,
    readonly runs: TestRunRequests,
    readonly transfer: TestCaseTransfer,
    readonly batches: BatchRunner,
  ) {}

  static async open(deps: TestingDeps): Promise<TestingRuntime> {
    const options = deps.options ?? {};
    const { store, config } = deps;
    await migrate(store.db, testingMigrations, TESTING_MIGRATIONS_TABLE);
    store.registerProjections(testingProjections);
    const clock = options.clock ?? (() => new Date());
    const logger = options.logger ?? createLogger('testing');
    const engine = options.engine ?? busEngine(deps.bus);
    const catalog = options.catalog ?? busCatalog(deps.bus);
    const runner = new TestRunner({
      store,
      db: store.db,
      engine,
      clock,
      runTimeoutSeconds: config.testing.runTimeoutSeconds,
      maxViolations: config.testing.maxViolations,
      outputInlineMaxBytes: config.events.valueInlineMaxBytes,
    });
    const batches = new BatchRunner({
      store,
      db: store.db,
      runner,
      clock,
      logger,
      concurrency: config.testing.batchConcurrency,
    });
    const cases = new TestCaseRequests({ store, db: store.db, catalog, clock });
    const runs = new TestRunRequests({
      db: store.db,
      catalog,
      engine,
      runner,
      batches,
      cases,
      batchMaxCases: config.testing.batchMaxCases,
      batchMaxWaitSeconds: config.testing.batchWaitSeconds,
    });
    return new TestingRuntime(cases, runs, new TestCaseTransfer({ store, db: store.db, catalog, clock }), batches);
  }

  /** Resumes the batches a stopped service left running. */
  async start(): Promise<void> {
    await this.batches.resumeAll();
  }

  stop(): void {
    this.batches.stop();
  }
}
