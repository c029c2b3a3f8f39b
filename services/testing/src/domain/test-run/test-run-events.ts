import type { TestRun } from '@weft/contracts';
import type { TestOutcome } from '../validation/test-outcome.js';

/** A test run: started when its execution is requested, completed with the judged outcome. */
export type TestRunEvent =
  | {
      type: 'TestRunStarted';
      data: Pick<
        TestRun,
        | 'testCaseId'
        | 'testCaseName'
        | 'processId'
        | 'organizationId'
        | 'batchId'
        | 'executionId'
        | 'startedAt'
        | 'runByUserId'
      >;
    }
  | { type: 'TestRunCompleted'; data: TestOutcome & { completedAt: string; durationMs: number } };

/** A batch: which cases it runs (ids chosen up front, so a resumed batch reuses them) and which it skips. */
export type TestBatchEvent =
  | {
      type: 'TestBatchStarted';
      data: {
        processId: string;
        organizationId: string;
        entries: { testCaseId: string; testCaseName: string; runId: string; executionId: string }[];
        skipped: { testCaseId: string; name: string; reason: 'disabled' }[];
        startedAt: string;
        runByUserId: string;
      };
    }
  | { type: 'TestBatchCompleted'; data: { completedAt: string } };

export const TEST_RUN_EVENT_TYPES = ['TestRunStarted', 'TestRunCompleted'] as const;
export const TEST_BATCH_EVENT_TYPES = ['TestBatchStarted', 'TestBatchCompleted'] as const;

export const testRunStream = (id: string): string => `testrun-${id}`;
export const testBatchStream = (id: string): string => `testbatch-${id}`;
