import { randomUUID } from 'node:crypto';
import type { TestBatch, TestCase } from '@weft/contracts';
import { timeOrderedUuid, type Db, type EventStore } from '@weft/event-store';
import type { Logger } from '@weft/observability';
import { testBatchStream, type TestBatchEvent } from '../domain/test-run/test-run-events.js';
import type { BatchRow } from '../projections/test-batch-projection.js';
import { findBatch, findTestCase, runningBatches, runsOfBatch, statsOf } from '../projections/testing-queries.js';
import type { Clock } from './testing-ports.js';
import type { TestRunner } from './test-runner.js';

export interface BatchRunnerDeps {
  store: EventStore;
  db: Db;
  runner: TestRunner;
  clock: Clock;
  logger: Logger;
  /** Runs of one batch in flight at once; 1 runs them in sequence. */
  concurrency: number;
}

export interface BatchRequest {
  processId: string;
  organizationId: string;
  toRun: TestCase[];
  skipped: TestCase[];
  runBy: { userId: string; userName: string };
  correlationId?: string;
}

/**
 * Batches run in the background of the testing service: the plan (every run and execution id) is
 * an event first, so progress is readable while it runs and a restarted service resumes it
 * without starting any execution twice.
 */
export class BatchRunner {
  private readonly workers = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(private readonly deps: BatchRunnerDeps) {}

  async start(request: BatchRequest): Promise<string> {
    const batchId = randomUUID();
    const started: TestBatchEvent = {
      type: 'TestBatchStarted',
      data: {
        processId: request.processId,
        organizationId: request.organizationId,
        entries: request.toRun.map((testCase) => ({
          testCaseId: testCase.id,
          testCaseName: testCase.name,
          runId: randomUUID(),
          executionId: timeOrderedUuid(),
        })),
        skipped: request.skipped.map((testCase) => ({
          testCaseId: testCase.id,
          name: testCase.name,
          reason: 'disabled',
        })),
        startedAt: this.deps.clock().toISOString(),
        runByUserId: request.runBy.userId,
      },
    };
    const metadata = {
      actorId: request.runBy.userId,
      actorName: request.runBy.userName,
      organizationId: request.organizationId,
      processId: request.processId,
      correlationId: request.correlationId,
    };
    await this.deps.store.append(testBatchStream(batchId), [{ ...started, metadata }], {
      expectedVersion: 'no_stream',
    });
    const cases = new Map(request.toRun.map((testCase) => [testCase.id, testCase]));
    this.launch(batchId, request.runBy, request.correlationId, cases);
    return batchId;
  }

  /** Resumes the batches a stopped service left running. */
  async resumeAll(): Promise<void> {
    for (const batch of await runningBatches(this.deps.db)) {
      if (this.workers.has(batch.id)) continue;
      this.launch(batch.id, { userId: batch.runByUserId, userName: 'batch (resumed)' }, undefined, new Map());
    }
  }

  /** Resolves when the batch is done or `seconds` have passed, whichever is first. */
  async waitFor(batchId: string, seconds: number): Promise<void> {
    const worker = this.workers.get(batchId);
    if (!worker || seconds <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([worker, new Promise<void>((resolve) => (timer = setTimeout(resolve, seconds * 1000)))]);
    clearTimeout(timer);
  }

  async view(batchId: string): Promise<TestBatch | undefined> {
    const batch = await findBatch(this.deps.db, batchId);
    if (!batch) return undefined;
    const runs = await runsOfBatch(this.deps.db, batchId);
    const finished = runs.filter((run) => run.status !== 'running');
    return {
      id: batch.id,
      processId: batch.processId,
      organizationId: batch.organizationId,
      status: batch.status,
      total: batch.entries.length,
      done: finished.length,
      skipped: batch.skipped,
      runs,
      stats: statsOf(
        (['passed', 'failed', 'error', 'timeout'] as const).map((status) => {
          const ofStatus = finished.filter((run) => run.status === status);
          return { status, count: ofStatus.length, ms: ofStatus.reduce((sum, run) => sum + (run.durationMs ?? 0), 0) };
        }),
      ),
      startedAt: batch.startedAt,
      completedAt: batch.completedAt,
      runByUserId: batch.runByUserId,
    };
  }

  /**
   * Stops taking new runs without waiting for the ones in flight (an execution may wait for hours):
   * the next start resumes each unfinished batch, reusing the execution ids of its plan.
   */
  stop(): void {
    this.stopping = true;
  }

  private launch(
    batchId: string,
    runBy: { userId: string; userName: string },
    correlationId: string | undefined,
    cases: Map<string, TestCase>,
  ): void {
    const worker = this.work(batchId, runBy, correlationId, cases)
      .catch((error: unknown) =>
        this.deps.logger.warn({ err: error, batchId }, 'test batch stopped; it resumes at the next start'),
      )
      .finally(() => this.workers.delete(batchId));
    this.workers.set(batchId, worker);
  }

  private async work(
    batchId: string,
    runBy: { userId: string; userName: string },
    correlationId: string | undefined,
    cases: Map<string, TestCase>,
  ): Promise<void> {
    const batch = (await findBatch(this.deps.db, batchId)) as BatchRow;
    const queue = [...batch.entries];
    const next = async (): Promise<void> => {
      while (!this.stopping) {
        const entry = queue.shift();
        if (!entry) return;
        const testCase = cases.get(entry.testCaseId) ?? (await findTestCase(this.deps.db, entry.testCaseId));
        if (!testCase) {
          this.deps.logger.warn({ batchId, testCaseId: entry.testCaseId }, 'test case deleted before its batch run');
          continue;
        }
        await this.deps.runner.run(testCase, {
          runId: entry.runId,
          executionId: entry.executionId,
          batchId,
          runBy,
          correlationId,
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.concurrency, queue.length || 1) }, next));
    // Stopped: the next start resumes the batch (finished runs are skipped) and completes it.
    if (this.stopping) return;
    const completed: TestBatchEvent = {
      type: 'TestBatchCompleted',
      data: { completedAt: this.deps.clock().toISOString() },
    };
    const metadata = { organizationId: batch.organizationId, processId: batch.processId, correlationId };
    await this.deps.store.append(testBatchStream(batchId), [{ ...completed, metadata }], { expectedVersion: 1 });
  }
}
