import { ProblemError, type ExecutionRecord, type TestCase, type TestRun } from '@weft/contracts';
import type { Db, EventMetadata, EventStore } from '@weft/event-store';
import { testRunStream, type TestRunEvent } from '../domain/test-run/test-run-events.js';
import { judgeExecution, type TestOutcome } from '../domain/validation/test-outcome.js';
import { findTestRun } from '../projections/testing-queries.js';
import type { Clock, EnginePort } from './testing-ports.js';

export interface TestRunPlan {
  runId: string;
  /** Chosen before the request is enqueued, so a redelivered or resumed run never starts a second execution. */
  executionId: string;
  batchId: string | null;
  runBy: { userId: string; userName: string };
  correlationId?: string;
}

export interface TestRunnerDeps {
  store: EventStore;
  db: Db;
  engine: EnginePort;
  clock: Clock;
  /** Longest a run waits for its execution; still running then means `timeout`. */
  runTimeoutSeconds: number;
  /** Violations kept per run. */
  maxViolations: number;
  /** Larger outputs are not copied into the run's event (WEFT_EVENT_VALUE_INLINE_MAX_BYTES). */
  outputInlineMaxBytes: number;
}

/** Runs one test case through the engine's work queue and records the judged outcome as events. */
export class TestRunner {
  constructor(private readonly deps: TestRunnerDeps) {}

  async run(testCase: TestCase, plan: TestRunPlan): Promise<TestRun> {
    const stream = testRunStream(plan.runId);
    const metadata: EventMetadata = {
      actorId: plan.runBy.userId,
      actorName: plan.runBy.userName,
      organizationId: testCase.organizationId,
      processId: testCase.processId,
      correlationId: plan.correlationId,
    };
    const version = await this.deps.store.streamVersion(stream);
    if (version >= 2) return this.read(plan.runId);
    const startedAt = version === 1 ? (await this.read(plan.runId)).startedAt : this.deps.clock().toISOString();
    if (version === 0) {
      const started: TestRunEvent = {
        type: 'TestRunStarted',
        data: {
          testCaseId: testCase.id,
          testCaseName: testCase.name,
          processId: testCase.processId,
          organizationId: testCase.organizationId,
          batchId: plan.batchId,
          executionId: plan.executionId,
          startedAt,
          runByUserId: plan.runBy.userId,
        },
      };
      await this.deps.store.append(stream, [{ ...started, metadata }], { expectedVersion: 'no_stream' });
    }
    const outcome = this.withinEventSize(await this.execute(testCase, plan, startedAt));
    const completedAt = this.deps.clock();
    const completed: TestRunEvent = {
      type: 'TestRunCompleted',
      data: {
        ...outcome,
        completedAt: completedAt.toISOString(),
        durationMs: Math.max(0, completedAt.getTime() - Date.parse(startedAt)),
      },
    };
    await this.deps.store.append(stream, [{ ...completed, metadata }], { expectedVersion: 1 });
    return this.read(plan.runId);
  }

  private async execute(testCase: TestCase, plan: TestRunPlan, requestedAt: string): Promise<TestOutcome> {
    let record: ExecutionRecord;
    try {
      record = await this.deps.engine.run(
        {
          executionId: plan.executionId,
          processId: testCase.processId,
          organizationId: testCase.organizationId,
          inputNodeId: testCase.inputNodeId,
          inputData: testCase.inputData,
          triggeredByUserId: plan.runBy.userId,
          triggeredByUserName: plan.runBy.userName,
          source: 'testing',
          correlationId: plan.correlationId,
          requestedAt,
        },
        this.deps.runTimeoutSeconds,
      );
    } catch (error) {
      // The engine refused the request (input node gone, graph invalid, process deleted) or did not answer.
      const message = error instanceof ProblemError ? (error.problem.detail ?? error.message) : String(error);
      return judgeExecution(
        { status: 'failed', output: null, errorMessage: `the execution could not run: ${message}` },
        testCase,
        this.deps,
      );
    }
    const errorMessage =
      record.status === 'running'
        ? `the execution was still running after ${this.deps.runTimeoutSeconds} s`
        : record.error_message;
    return judgeExecution({ status: record.status, output: record.output_data, errorMessage }, testCase, this.deps);
  }

  /** An output past the inline limit stays in the execution record only (GET /test-runs/:id reads it there). */
  private withinEventSize(outcome: TestOutcome): TestOutcome {
    const bytes = Buffer.byteLength(JSON.stringify(outcome.actualOutput ?? null));
    if (bytes <= this.deps.outputInlineMaxBytes) return outcome;
    return { ...outcome, actualOutput: null, actualOutputOmitted: true };
  }

  private async read(runId: string): Promise<TestRun> {
    const run = await findTestRun(this.deps.db, runId);
    if (!run) throw new Error(`test run ${runId} is not in the read model`);
    return run;
  }
}
